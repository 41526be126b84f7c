/** StreamsGroupDescribe (key 89): describes streams groups, their topology, members and tasks (KIP-1071). v1 can return the topology description (KIP-1331) and the assignor name (KIP-1357). */
import { api, array, field, struct } from '../schema.js';

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

const assignmentFields = [
  array('activeTasks', '0+', taskIdsFields),
  array('standbyTasks', '0+', taskIdsFields),
  array('warmupTasks', '0+', taskIdsFields),
];

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

const topologyDescriptionNodeFields = [
  field('name', 'string', '1+'),
  field('nodeType', 'int8', '1+'),
  field('sourceTopics', '[]string', '1+'),
  field('sinkTopic', 'string', '1+', { nullable: '1+', default: null }),
  field('stores', '[]string', '1+'),
  field('successors', '[]string', '1+'),
];

const topologyDescriptionSubtopologyFields = [
  field('subtopologyId', 'string', '1+'),
  array('nodes', '1+', topologyDescriptionNodeFields),
];

const topologyDescriptionGlobalStoreFields = [
  struct('source', '1+', topologyDescriptionNodeFields),
  struct('processor', '1+', topologyDescriptionNodeFields),
];

const topologyDescriptionFields = [
  array('subtopologies', '1+', topologyDescriptionSubtopologyFields),
  array('globalStores', '1+', topologyDescriptionGlobalStoreFields),
];

export const StreamsGroupDescribe = api({
  key: 89,
  name: 'StreamsGroupDescribe',
  versions: '0-1',
  flexible: '0+',
  listeners: ['broker'],
  request: [
    field('groupIds', '[]string', '0+'),
    field('includeAuthorizedOperations', 'bool', '0+'),
    field('includeTopologyDescription', 'bool', '1+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    array('groups', '0+', [
      field('errorCode', 'int16', '0+'),
      field('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
      field('groupId', 'string', '0+'),
      field('groupState', 'string', '0+'),
      field('groupEpoch', 'int32', '0+'),
      field('assignmentEpoch', 'int32', '0+'),
      struct('topology', '0+', [
        field('epoch', 'int32', '0+'),
        array('subtopologies', '0+', [
          field('subtopologyId', 'string', '0+'),
          field('sourceTopics', '[]string', '0+'),
          field('repartitionSinkTopics', '[]string', '0+'),
          array('stateChangelogTopics', '0+', topicInfoFields),
          array('repartitionSourceTopics', '0+', topicInfoFields),
        ], { nullable: '0+', default: null }),
      ], { nullable: '0+', default: null }),
      array('members', '0+', [
        field('memberId', 'string', '0+'),
        field('memberEpoch', 'int32', '0+'),
        field('instanceId', 'string', '0+', { nullable: '0+', default: null }),
        field('rackId', 'string', '0+', { nullable: '0+', default: null }),
        field('clientId', 'string', '0+'),
        field('clientHost', 'string', '0+'),
        field('topologyEpoch', 'int32', '0+'),
        field('processId', 'string', '0+'),
        struct('userEndpoint', '0+', endpointFields, { nullable: '0+', default: null }),
        array('clientTags', '0+', keyValueFields),
        array('taskOffsets', '0+', taskOffsetFields),
        array('taskEndOffsets', '0+', taskOffsetFields),
        struct('assignment', '0+', assignmentFields),
        struct('targetAssignment', '0+', assignmentFields),
        field('isClassic', 'bool', '0+'),
      ]),
      field('authorizedOperations', 'int32', '0+', { default: -2147483648 }),
      struct('topologyDescription', '1+', topologyDescriptionFields, { nullable: '1+', default: null }),
      field('topologyDescriptionStatus', 'int8', '1+'),
      field('assignorName', 'string', '1+', { nullable: '1+', default: null }),
    ]),
  ],
});
