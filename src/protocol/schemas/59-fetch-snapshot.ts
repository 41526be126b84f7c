/** FetchSnapshot (key 59): a KRaft replica copies the leader's metadata snapshot in chunks (KIP-630). v1 adds the replica's directory id and leader endpoints (KIP-853). */
import { api, array, field, struct } from '../schema.js';

export const FetchSnapshot = api({
  key: 59,
  name: 'FetchSnapshot',
  versions: '0-1',
  flexible: '0+',
  listeners: ['controller'],
  request: [
    field('clusterId', 'string', '0+', { nullable: '0+', default: null, tag: 0 }),
    field('replicaId', 'int32', '0+', { default: -1 }),
    field('maxBytes', 'int32', '0+', { default: 0x7fffffff }),
    array('topics', '0+', [
      field('name', 'string', '0+'),
      array('partitions', '0+', [
        field('partition', 'int32', '0+'),
        field('currentLeaderEpoch', 'int32', '0+'),
        struct('snapshotId', '0+', [
          field('endOffset', 'int64', '0+'),
          field('epoch', 'int32', '0+'),
        ]),
        field('position', 'int64', '0+'),
        field('replicaDirectoryId', 'uuid', '1+', { tag: 0 }),
      ]),
    ]),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    array('topics', '0+', [
      field('name', 'string', '0+'),
      array('partitions', '0+', [
        field('index', 'int32', '0+'),
        field('errorCode', 'int16', '0+'),
        struct('snapshotId', '0+', [
          field('endOffset', 'int64', '0+'),
          field('epoch', 'int32', '0+'),
        ]),
        struct('currentLeader', '0+', [
          field('leaderId', 'int32', '0+'),
          field('leaderEpoch', 'int32', '0+'),
        ], { tag: 0 }),
        field('size', 'int64', '0+'),
        field('position', 'int64', '0+'),
        field('unalignedRecords', 'records', '0+'),
      ]),
    ]),
    array('nodeEndpoints', '1+', [
      field('nodeId', 'int32', '1+'),
      field('host', 'string', '1+'),
      field('port', 'uint16', '1+'),
    ], { tag: 0 }),
  ],
});
