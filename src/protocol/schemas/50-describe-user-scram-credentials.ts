/**
 * DescribeUserScramCredentials (key 50): lists the SCRAM mechanisms and iteration counts stored for users
 * (KIP-554); flexible from v0.
 */
import { api, array, field } from '../schema.js';

export const DescribeUserScramCredentials = api({
  key: 50,
  name: 'DescribeUserScramCredentials',
  versions: '0',
  flexible: '0+',
  listeners: ['broker', 'controller'],
  request: [
    array('users', '0+', [
      field('name', 'string', '0+'),
    ], { nullable: '0+' }),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    field('errorMessage', 'string', '0+', { nullable: '0+' }),
    array('results', '0+', [
      field('user', 'string', '0+'),
      field('errorCode', 'int16', '0+'),
      field('errorMessage', 'string', '0+', { nullable: '0+' }),
      array('credentialInfos', '0+', [
        field('mechanism', 'int8', '0+'),
        field('iterations', 'int32', '0+'),
      ]),
    ]),
  ],
});
