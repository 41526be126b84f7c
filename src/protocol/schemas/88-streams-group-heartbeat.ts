/** StreamsGroupHeartbeat (key 88): the Kafka Streams rebalance protocol's call for joining, sending the topology and receiving task assignments (KIP-1071). v1 lets the broker ask for the topology description (KIP-1331). */
import { api, array, field, struct } from '../schema.js';

const keyValueFields = [
  field('key', 'string', '0+'),
  field('value', 'string', '0+'),
];

const topicInfoFields = [
  field('name', 'string', '0+'),
  field('partitions', 'int32', '0+'),
  field('replicationFactor', 'int16', '0+'),
  array('topicConfigs', '0+', keyValueFields),
];

const endpointFields = [
  field('host', 'string', '0+'),
  field('port', 'uint16', '0+'),
];

const taskOffsetFields = [
  field('subtopologyId', 'string', '0+'),
  field('partition', 'int32', '0+'),
  field('offset', 'int64', '0+'),
];

const taskIdsFields = [
  field('subtopologyId', 'string', '0+'),
  field('partitions', '[]int32', '0+'),
];

const statusFields = [
  field('statusCode', 'int8', '0+'),
  field('statusDetail', 'string', '0+'),
];

const topicPartitionFields = [
  field('topic', 'string', '0+'),
  field('partitions', '[]int32', '0+'),
];

export const StreamsGroupHeartbeat = api({
  key: 88,
  name: 'StreamsGroupHeartbeat',
  versions: '0-1',
  flexible: '0+',
  listeners: ['broker'],
  request: [
    field('groupId', 'string', '0+'),
    field('memberId', 'string', '0+'),
    field('memberEpoch', 'int32', '0+'),
    field('endpointInformationEpoch', 'int32', '0+'),
    field('instanceId', 'string', '0+', { nullable: '0+', default: null }),
    field('rackId', 'string', '0+', { nullable: '0+', default: null }),
    field('rebalanceTimeoutMs', 'int32', '0+', { default: -1 }),
    struct('topology', '0+', [
      field('epoch', 'int32', '0+'),
      array('subtopologies', '0+', [
        field('subtopologyId', 'string', '0+'),
        field('sourceTopics', '[]string', '0+'),
        field('sourceTopicRegex', '[]string', '0+'),
        array('stateChangelogTopics', '0+', topicInfoFields),
        field('repartitionSinkTopics', '[]string', '0+'),
        array('repartitionSourceTopics', '0+', topicInfoFields),
        array('copartitionGroups', '0+', [
          field('sourceTopics', '[]int16', '0+'),
          field('sourceTopicRegex', '[]int16', '0+'),
          field('repartitionSourceTopics', '[]int16', '0+'),
        ]),
      ]),
    ], { nullable: '0+', default: null }),
    array('activeTasks', '0+', taskIdsFields, { nullable: '0+', default: null }),
    array('standbyTasks', '0+', taskIdsFields, { nullable: '0+', default: null }),
    array('warmupTasks', '0+', taskIdsFields, { nullable: '0+', default: null }),
    field('processId', 'string', '0+', { nullable: '0+', default: null }),
    struct('userEndpoint', '0+', endpointFields, { nullable: '0+', default: null }),
    array('clientTags', '0+', keyValueFields, { nullable: '0+', default: null }),
    array('taskOffsets', '0+', taskOffsetFields, { nullable: '0+', default: null }),
    array('taskEndOffsets', '0+', taskOffsetFields, { nullable: '0+', default: null }),
    field('shutdownApplication', 'bool', '0+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    field('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
    field('memberId', 'string', '0+'),
    field('memberEpoch', 'int32', '0+'),
    field('heartbeatIntervalMs', 'int32', '0+'),
    field('acceptableRecoveryLagLegacy', 'int32', '0'),
    field('taskOffsetIntervalMs', 'int32', '0+'),
    field('acceptableRecoveryLag', 'int64', '1+', { default: -1 }),
    array('status', '0+', statusFields, { nullable: '0+' }),
    array('activeTasks', '0+', taskIdsFields, { nullable: '0+', default: null }),
    array('standbyTasks', '0+', taskIdsFields, { nullable: '0+', default: null }),
    array('warmupTasks', '0+', taskIdsFields, { nullable: '0+', default: null }),
    field('topologyDescriptionRequired', 'bool', '1+'),
    field('endpointInformationEpoch', 'int32', '0+'),
    array('partitionsByUserEndpoint', '0+', [
      struct('userEndpoint', '0+', endpointFields),
      array('activePartitions', '0+', topicPartitionFields),
      array('standbyPartitions', '0+', topicPartitionFields),
    ], { nullable: '0+', default: null }),
  ],
});
