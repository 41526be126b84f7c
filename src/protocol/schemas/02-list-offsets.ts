/**
 * ListOffsets (key 2): the offset for a timestamp, or the earliest / latest offset. v2 IsolationLevel (KIP-98); v4
 * leader epochs (KIP-320); v6 flexible; v7 max timestamp (KIP-734); v8 local log start (KIP-405); v9 last tiered
 * offset (KIP-1005); v10 TimeoutMs for remote lookups (KIP-1075); v11 earliest pending upload (KIP-1023).
 */
import { api, array, field } from '../schema.js';

export const ListOffsets = api({
  key: 2,
  name: 'ListOffsets',
  versions: '1-11',
  flexible: '6+',
  listeners: ['broker'],
  request: [
    field('replicaId', 'int32', '0+'),
    field('isolationLevel', 'int8', '2+'),
    array('topics', '0+', [
      field('name', 'string', '0+'),
      array('partitions', '0+', [
        field('partitionIndex', 'int32', '0+'),
        field('currentLeaderEpoch', 'int32', '4+', { default: -1 }),
        field('timestamp', 'int64', '0+'),
      ]),
    ]),
    field('timeoutMs', 'int32', '10+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '2+'),
    array('topics', '0+', [
      field('name', 'string', '0+'),
      array('partitions', '0+', [
        field('partitionIndex', 'int32', '0+'),
        field('errorCode', 'int16', '0+'),
        field('timestamp', 'int64', '1+', { default: -1 }),
        field('offset', 'int64', '1+', { default: -1 }),
        field('leaderEpoch', 'int32', '4+', { default: -1 }),
      ]),
    ]),
  ],
});
