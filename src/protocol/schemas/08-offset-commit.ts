/**
 * OffsetCommit (key 8): a group's committed offsets. v5 drops RetentionTimeMs; v6 leader epoch (KIP-320); v7
 * GroupInstanceId (KIP-345); v8 flexible; v9 consumer-protocol member epochs (KIP-848); v10 topic IDs instead of
 * names.
 */
import { api, array, field } from '../schema.js';

export const OffsetCommit = api({
  key: 8,
  name: 'OffsetCommit',
  versions: '2-10',
  flexible: '8+',
  listeners: ['broker'],
  request: [
    field('groupId', 'string', '0+'),
    field('generationIdOrMemberEpoch', 'int32', '1+', { default: -1 }),
    field('memberId', 'string', '1+'),
    field('groupInstanceId', 'string', '7+', { nullable: '7+', default: null }),
    field('retentionTimeMs', 'int64', '2-4', { default: -1 }),
    array('topics', '0+', [
      field('name', 'string', '0-9'),
      field('topicId', 'uuid', '10+'),
      array('partitions', '0+', [
        field('partitionIndex', 'int32', '0+'),
        field('committedOffset', 'int64', '0+'),
        field('committedLeaderEpoch', 'int32', '6+', { default: -1 }),
        field('committedMetadata', 'string', '0+', { nullable: '0+' }),
      ]),
    ]),
  ],
  response: [
    field('throttleTimeMs', 'int32', '3+'),
    array('topics', '0+', [
      field('name', 'string', '0-9'),
      field('topicId', 'uuid', '10+'),
      array('partitions', '0+', [
        field('partitionIndex', 'int32', '0+'),
        field('errorCode', 'int16', '0+'),
      ]),
    ]),
  ],
});
