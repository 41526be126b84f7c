/** ListConfigResources (key 74): lists resources that have configurations. v0 was ListClientMetricsResources (KIP-714); v1 filters by resource type and returns it (KIP-1142). */
import { api, array, field } from '../schema.js';

export const ListConfigResources = api({
  key: 74,
  name: 'ListConfigResources',
  versions: '0-1',
  flexible: '0+',
  listeners: ['broker'],
  request: [
    field('resourceTypes', '[]int8', '1+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    array('configResources', '0+', [
      field('resourceName', 'string', '0+'),
      field('resourceType', 'int8', '1+', { default: 16 }),
    ]),
  ],
});
