/**
 * TxnOffsetCommit (key 28): a transactional producer commits consumer offsets as part of its transaction (KIP-98).
 * v2 adds the committed leader epoch (KIP-320); v3 adds group member identity for fencing zombies and is flexible
 * (KIP-447, KIP-482); v4 may return TRANSACTION_ABORTABLE and v5 implies AddOffsetsToTxn under transactions V2
 * (KIP-890); v6 addresses topics by ID (KIP-1319).
 */
import { api, array, field } from '../schema.js';

export const TxnOffsetCommit = api({
  key: 28,
  name: 'TxnOffsetCommit',
  versions: '0-6',
  flexible: '3+',
  listeners: ['broker'],
  request: [
    field('transactionalId', 'string', '0+'),
    field('groupId', 'string', '0+'),
    field('producerId', 'int64', '0+'),
    field('producerEpoch', 'int16', '0+'),
    field('generationIdOrMemberEpoch', 'int32', '3+', { default: -1 }),
    field('memberId', 'string', '3+'),
    field('groupInstanceId', 'string', '3+', { nullable: '3+', default: null }),
    array('topics', '0+', [
      field('name', 'string', '0-5'),
      field('topicId', 'uuid', '6+'),
      array('partitions', '0+', [
        field('partitionIndex', 'int32', '0+'),
        field('committedOffset', 'int64', '0+'),
        field('committedLeaderEpoch', 'int32', '2+', { default: -1 }),
        field('committedMetadata', 'string', '0+', { nullable: '0+' }),
      ]),
    ]),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    array('topics', '0+', [
      field('name', 'string', '0-5'),
      field('topicId', 'uuid', '6+'),
      array('partitions', '0+', [
        field('partitionIndex', 'int32', '0+'),
        field('errorCode', 'int16', '0+'),
      ]),
    ]),
  ],
});
