/**
 * AlterPartitionReassignments (key 45): starts or cancels partition replica reassignments (KIP-455); flexible from
 * v0. v1 lets the caller forbid changing the replication factor (KIP-860).
 */
import { api, array, field } from '../schema.js';

export const AlterPartitionReassignments = api({
  key: 45,
  name: 'AlterPartitionReassignments',
  versions: '0-1',
  flexible: '0+',
  listeners: ['broker', 'controller'],
  request: [
    field('timeoutMs', 'int32', '0+', { default: 60000 }),
    field('allowReplicationFactorChange', 'bool', '1+', { default: true }),
    array('topics', '0+', [
      field('name', 'string', '0+'),
      array('partitions', '0+', [
        field('partitionIndex', 'int32', '0+'),
        field('replicas', '[]int32', '0+', { nullable: '0+', default: null }),
      ]),
    ]),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('allowReplicationFactorChange', 'bool', '1+', { default: true }),
    field('errorCode', 'int16', '0+'),
    field('errorMessage', 'string', '0+', { nullable: '0+' }),
    array('responses', '0+', [
      field('name', 'string', '0+'),
      array('partitions', '0+', [
        field('partitionIndex', 'int32', '0+'),
        field('errorCode', 'int16', '0+'),
        field('errorMessage', 'string', '0+', { nullable: '0+' }),
      ]),
    ]),
  ],
});
