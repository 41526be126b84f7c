/** AlterClientQuotas (key 49): sets or removes client quotas per entity (KIP-546). v1 flexible (KIP-482). */
import { api, array, field } from '../schema.js';

export const AlterClientQuotas = api({
  key: 49,
  name: 'AlterClientQuotas',
  versions: '0-1',
  flexible: '1+',
  listeners: ['broker', 'controller'],
  request: [
    array('entries', '0+', [
      array('entity', '0+', [
        field('entityType', 'string', '0+'),
        field('entityName', 'string', '0+', { nullable: '0+' }),
      ]),
      array('ops', '0+', [
        field('key', 'string', '0+'),
        field('value', 'float64', '0+'),
        field('remove', 'bool', '0+'),
      ]),
    ]),
    field('validateOnly', 'bool', '0+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    array('entries', '0+', [
      field('errorCode', 'int16', '0+'),
      field('errorMessage', 'string', '0+', { nullable: '0+' }),
      array('entity', '0+', [
        field('entityType', 'string', '0+'),
        field('entityName', 'string', '0+', { nullable: '0+' }),
      ]),
    ]),
  ],
});
