/**
 * CreatePartitions (key 37): adds partitions to existing topics (KIP-195). v2 flexible (KIP-482); v3 may return
 * THROTTLING_QUOTA_EXCEEDED (KIP-599).
 */
import { api, array, field } from '../schema.js';

export const CreatePartitions = api({
  key: 37,
  name: 'CreatePartitions',
  versions: '0-3',
  flexible: '2+',
  listeners: ['broker', 'controller'],
  request: [
    array('topics', '0+', [
      field('name', 'string', '0+'),
      field('count', 'int32', '0+'),
      array('assignments', '0+', [
        field('brokerIds', '[]int32', '0+'),
      ], { nullable: '0+' }),
    ]),
    field('timeoutMs', 'int32', '0+'),
    field('validateOnly', 'bool', '0+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    array('results', '0+', [
      field('name', 'string', '0+'),
      field('errorCode', 'int16', '0+'),
      field('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
    ]),
  ],
});
