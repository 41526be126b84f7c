/** DescribeTopicPartitions (key 75): paged topic and partition description, including eligible leader replicas (KIP-966). */
import { api, array, field, struct } from '../schema.js';

export const DescribeTopicPartitions = api({
  key: 75,
  name: 'DescribeTopicPartitions',
  versions: '0',
  flexible: '0+',
  listeners: ['broker'],
  request: [
    array('topics', '0+', [
      field('name', 'string', '0+'),
    ]),
    field('responsePartitionLimit', 'int32', '0+', { default: 2000 }),
    struct('cursor', '0+', [
      field('topicName', 'string', '0+'),
      field('partitionIndex', 'int32', '0+'),
    ], { nullable: '0+', default: null }),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    array('topics', '0+', [
      field('errorCode', 'int16', '0+'),
      field('name', 'string', '0+', { nullable: '0+' }),
      field('topicId', 'uuid', '0+'),
      field('isInternal', 'bool', '0+'),
      array('partitions', '0+', [
        field('errorCode', 'int16', '0+'),
        field('partitionIndex', 'int32', '0+'),
        field('leaderId', 'int32', '0+'),
        field('leaderEpoch', 'int32', '0+', { default: -1 }),
        field('replicaNodes', '[]int32', '0+'),
        field('isrNodes', '[]int32', '0+'),
        field('eligibleLeaderReplicas', '[]int32', '0+', { nullable: '0+', default: null }),
        field('lastKnownElr', '[]int32', '0+', { nullable: '0+', default: null }),
        field('offlineReplicas', '[]int32', '0+'),
      ]),
      field('topicAuthorizedOperations', 'int32', '0+', { default: -2147483648 }),
    ]),
    struct('nextCursor', '0+', [
      field('topicName', 'string', '0+'),
      field('partitionIndex', 'int32', '0+'),
    ], { nullable: '0+', default: null }),
  ],
});
