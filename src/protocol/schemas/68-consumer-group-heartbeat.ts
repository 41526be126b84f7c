/** ConsumerGroupHeartbeat (key 68): the KIP-848 consumer protocol's single call for joining, heartbeating and receiving assignments. v1 adds subscription by regex and client-generated member ids (KIP-1082). */
import { api, array, field, struct } from '../schema.js';

const topicPartitionsFields = [
  field('topicId', 'uuid', '0+'),
  field('partitions', '[]int32', '0+'),
];

export const ConsumerGroupHeartbeat = api({
  key: 68,
  name: 'ConsumerGroupHeartbeat',
  versions: '0-1',
  flexible: '0+',
  listeners: ['broker'],
  request: [
    field('groupId', 'string', '0+'),
    field('memberId', 'string', '0+'),
    field('memberEpoch', 'int32', '0+'),
    field('instanceId', 'string', '0+', { nullable: '0+', default: null }),
    field('rackId', 'string', '0+', { nullable: '0+', default: null }),
    field('rebalanceTimeoutMs', 'int32', '0+', { default: -1 }),
    field('subscribedTopicNames', '[]string', '0+', { nullable: '0+', default: null }),
    field('subscribedTopicRegex', 'string', '1+', { nullable: '1+', default: null }),
    field('serverAssignor', 'string', '0+', { nullable: '0+', default: null }),
    array('topicPartitions', '0+', [
      field('topicId', 'uuid', '0+'),
      field('partitions', '[]int32', '0+'),
    ], { nullable: '0+', default: null }),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    field('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
    field('memberId', 'string', '0+', { nullable: '0+', default: null }),
    field('memberEpoch', 'int32', '0+'),
    field('heartbeatIntervalMs', 'int32', '0+'),
    struct('assignment', '0+', [
      array('topicPartitions', '0+', topicPartitionsFields),
    ], { nullable: '0+', default: null }),
  ],
});
