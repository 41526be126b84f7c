/** ListPartitionReassignments (key 46): lists ongoing partition reassignments (KIP-455); flexible from v0. */
import { api, array, field } from '../schema.js';

export const ListPartitionReassignments = api({
  key: 46,
  name: 'ListPartitionReassignments',
  versions: '0',
  flexible: '0+',
  listeners: ['broker', 'controller'],
  request: [
    field('timeoutMs', 'int32', '0+', { default: 60000 }),
    array('topics', '0+', [
      field('name', 'string', '0+'),
      field('partitionIndexes', '[]int32', '0+'),
    ], { nullable: '0+', default: null }),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    field('errorMessage', 'string', '0+', { nullable: '0+' }),
    array('topics', '0+', [
      field('name', 'string', '0+'),
      array('partitions', '0+', [
        field('partitionIndex', 'int32', '0+'),
        field('replicas', '[]int32', '0+'),
        field('addingReplicas', '[]int32', '0+'),
        field('removingReplicas', '[]int32', '0+'),
      ]),
    ]),
  ],
});
