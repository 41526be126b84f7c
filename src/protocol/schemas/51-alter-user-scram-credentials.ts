/**
 * AlterUserScramCredentials (key 51): adds or deletes users' SCRAM credentials (salted passwords) (KIP-554);
 * flexible from v0.
 */
import { api, array, field } from '../schema.js';

export const AlterUserScramCredentials = api({
  key: 51,
  name: 'AlterUserScramCredentials',
  versions: '0',
  flexible: '0+',
  listeners: ['broker', 'controller'],
  request: [
    array('deletions', '0+', [
      field('name', 'string', '0+'),
      field('mechanism', 'int8', '0+'),
    ]),
    array('upsertions', '0+', [
      field('name', 'string', '0+'),
      field('mechanism', 'int8', '0+'),
      field('iterations', 'int32', '0+'),
      field('salt', 'bytes', '0+'),
      field('saltedPassword', 'bytes', '0+'),
    ]),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    array('results', '0+', [
      field('user', 'string', '0+'),
      field('errorCode', 'int16', '0+'),
      field('errorMessage', 'string', '0+', { nullable: '0+' }),
    ]),
  ],
});
