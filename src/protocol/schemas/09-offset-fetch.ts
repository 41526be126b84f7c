/**
 * OffsetFetch (key 9): reads a group's committed offsets. v2 null topics means all; v5 leader epoch (KIP-320); v6
 * flexible; v7 RequireStable (KIP-447); v8 many groups per request (KIP-709); v9 MemberId / MemberEpoch (KIP-848);
 * v10 topic IDs instead of names.
 */
import { api, array, field } from '../schema.js';

export const OffsetFetch = api({
  key: 9,
  name: 'OffsetFetch',
  versions: '1-10',
  flexible: '6+',
  listeners: ['broker'],
  request: [
    field('groupId', 'string', '0-7'),
    array('topics', '0-7', [
      field('name', 'string', '0-7'),
      field('partitionIndexes', '[]int32', '0-7'),
    ], { nullable: '2-7' }),
    array('groups', '8+', [
      field('groupId', 'string', '8+'),
      field('memberId', 'string', '9+', { nullable: '9+', default: null }),
      field('memberEpoch', 'int32', '9+', { default: -1 }),
      array('topics', '8+', [
        field('name', 'string', '8-9'),
        field('topicId', 'uuid', '10+'),
        field('partitionIndexes', '[]int32', '8+'),
      ], { nullable: '8+' }),
    ]),
    field('requireStable', 'bool', '7+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '3+'),
    array('topics', '0-7', [
      field('name', 'string', '0-7'),
      array('partitions', '0-7', [
        field('partitionIndex', 'int32', '0-7'),
        field('committedOffset', 'int64', '0-7'),
        field('committedLeaderEpoch', 'int32', '5-7', { default: -1 }),
        field('metadata', 'string', '0-7', { nullable: '0-7' }),
        field('errorCode', 'int16', '0-7'),
      ]),
    ]),
    field('errorCode', 'int16', '2-7'),
    array('groups', '8+', [
      field('groupId', 'string', '8+'),
      array('topics', '8+', [
        field('name', 'string', '8-9'),
        field('topicId', 'uuid', '10+'),
        array('partitions', '8+', [
          field('partitionIndex', 'int32', '8+'),
          field('committedOffset', 'int64', '8+'),
          field('committedLeaderEpoch', 'int32', '8+', { default: -1 }),
          field('metadata', 'string', '8+', { nullable: '8+' }),
          field('errorCode', 'int16', '8+'),
        ]),
      ]),
      field('errorCode', 'int16', '8+'),
    ]),
  ],
});
