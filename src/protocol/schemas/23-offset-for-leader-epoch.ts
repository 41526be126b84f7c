/**
 * OffsetForLeaderEpoch (key 23): end offset of a leader epoch, for log truncation (KIP-101). v2 CurrentLeaderEpoch
 * (KIP-320); v3 ReplicaId; v4 flexible.
 */
import { api, array, field } from '../schema.js';

export const OffsetForLeaderEpoch = api({
  key: 23,
  name: 'OffsetForLeaderEpoch',
  versions: '2-4',
  flexible: '4+',
  listeners: ['broker'],
  request: [
    field('replicaId', 'int32', '3+', { default: -2 }),
    array('topics', '0+', [
      field('topic', 'string', '0+'),
      array('partitions', '0+', [
        field('partition', 'int32', '0+'),
        field('currentLeaderEpoch', 'int32', '2+', { default: -1 }),
        field('leaderEpoch', 'int32', '0+'),
      ]),
    ]),
  ],
  response: [
    field('throttleTimeMs', 'int32', '2+'),
    array('topics', '0+', [
      field('topic', 'string', '0+'),
      array('partitions', '0+', [
        field('errorCode', 'int16', '0+'),
        field('partition', 'int32', '0+'),
        field('leaderEpoch', 'int32', '1+', { default: -1 }),
        field('endOffset', 'int64', '0+', { default: -1 }),
      ]),
    ]),
  ],
});
