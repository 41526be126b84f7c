/** ShareGroupDescribe (key 77): describes share groups, their members and assignments (KIP-932). v0 was 4.0's early access and is gone; v1 is the baseline. */
import { api, array, field, struct } from '../schema.js';

const topicPartitionsFields = [
  field('topicId', 'uuid', '0+'),
  field('topicName', 'string', '0+'),
  field('partitions', '[]int32', '0+'),
];

const assignmentFields = [
  array('topicPartitions', '0+', topicPartitionsFields),
];

export const ShareGroupDescribe = api({
  key: 77,
  name: 'ShareGroupDescribe',
  versions: '1',
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
        field('rackId', 'string', '0+', { nullable: '0+', default: null }),
        field('memberEpoch', 'int32', '0+'),
        field('clientId', 'string', '0+'),
        field('clientHost', 'string', '0+'),
        field('subscribedTopicNames', '[]string', '0+'),
        struct('assignment', '0+', assignmentFields),
      ]),
      field('authorizedOperations', 'int32', '0+', { default: -2147483648 }),
    ]),
  ],
});
