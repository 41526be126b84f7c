/** ConsumerGroupDescribe (key 69): describes KIP-848 consumer groups, their members and assignments. v1 adds each member's type, classic or consumer (KIP-1099). */
import { api, array, field, struct } from '../schema.js';

const topicPartitionsFields = [
  field('topicId', 'uuid', '0+'),
  field('topicName', 'string', '0+'),
  field('partitions', '[]int32', '0+'),
];

const assignmentFields = [
  array('topicPartitions', '0+', topicPartitionsFields),
];

export const ConsumerGroupDescribe = api({
  key: 69,
  name: 'ConsumerGroupDescribe',
  versions: '0-1',
  flexible: '0+',
  listeners: ['broker'],
  request: [
    field('groupIds', '[]string', '0+'),
    field('includeAuthorizedOperations', 'bool', '0+'),
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
      field('assignorName', 'string', '0+'),
      array('members', '0+', [
        field('memberId', 'string', '0+'),
        field('instanceId', 'string', '0+', { nullable: '0+', default: null }),
        field('rackId', 'string', '0+', { nullable: '0+', default: null }),
        field('memberEpoch', 'int32', '0+'),
        field('clientId', 'string', '0+'),
        field('clientHost', 'string', '0+'),
        field('subscribedTopicNames', '[]string', '0+'),
        field('subscribedTopicRegex', 'string', '0+', { nullable: '0+', default: null }),
        struct('assignment', '0+', assignmentFields),
        struct('targetAssignment', '0+', assignmentFields),
        field('memberType', 'int8', '1+', { default: -1 }),
      ]),
      field('authorizedOperations', 'int32', '0+', { default: -2147483648 }),
    ]),
  ],
});
