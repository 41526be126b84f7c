/** UpdateFeatures (key 57): raises or lowers cluster-wide feature levels such as metadata.version (KIP-584). v1 adds upgrade types and validateOnly (KIP-778); v2 drops the per-feature results from the response. */
import { api, array, field } from '../schema.js';

export const UpdateFeatures = api({
  key: 57,
  name: 'UpdateFeatures',
  versions: '0-2',
  flexible: '0+',
  listeners: ['broker', 'controller'],
  request: [
    field('timeoutMs', 'int32', '0+', { default: 60000 }),
    array('featureUpdates', '0+', [
      field('feature', 'string', '0+'),
      field('maxVersionLevel', 'int16', '0+'),
      field('allowDowngrade', 'bool', '0'),
      field('upgradeType', 'int8', '1+', { default: 1 }),
    ]),
    field('validateOnly', 'bool', '1+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    field('errorMessage', 'string', '0+', { nullable: '0+' }),
    array('results', '0-1', [
      field('feature', 'string', '0+'),
      field('errorCode', 'int16', '0+'),
      field('errorMessage', 'string', '0+', { nullable: '0+' }),
    ]),
  ],
});
