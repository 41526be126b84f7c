/** ShareGroupHeartbeat (key 76): a share-group consumer joins, heartbeats and receives its assignment (KIP-932). v0 was 4.0's early access and is gone; v1 is the baseline. */
import { api, array, field, struct } from '../schema.js';

const topicPartitionsFields = [
  field('topicId', 'uuid', '0+'),
  field('partitions', '[]int32', '0+'),
];

export const ShareGroupHeartbeat = api({
  key: 76,
  name: 'ShareGroupHeartbeat',
  versions: '1',
  flexible: '0+',
  listeners: ['broker'],
  request: [
    field('groupId', 'string', '0+'),
    field('memberId', 'string', '0+'),
    field('memberEpoch', 'int32', '0+'),
    field('rackId', 'string', '0+', { nullable: '0+', default: null }),
    field('subscribedTopicNames', '[]string', '0+', { nullable: '0+', default: null }),
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
