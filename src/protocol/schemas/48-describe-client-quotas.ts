/** DescribeClientQuotas (key 48): reads client quotas matching entity filters (KIP-546). v1 flexible (KIP-482). */
import { api, array, field } from '../schema.js';

export const DescribeClientQuotas = api({
  key: 48,
  name: 'DescribeClientQuotas',
  versions: '0-1',
  flexible: '1+',
  listeners: ['broker'],
  request: [
    array('components', '0+', [
      field('entityType', 'string', '0+'),
      field('matchType', 'int8', '0+'),
      field('match', 'string', '0+', { nullable: '0+' }),
    ]),
    field('strict', 'bool', '0+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    field('errorMessage', 'string', '0+', { nullable: '0+' }),
    array('entries', '0+', [
      array('entity', '0+', [
        field('entityType', 'string', '0+'),
        field('entityName', 'string', '0+', { nullable: '0+' }),
      ]),
      array('values', '0+', [
        field('key', 'string', '0+'),
        field('value', 'float64', '0+'),
      ]),
    ], { nullable: '0+' }),
  ],
});
