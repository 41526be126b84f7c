/**
 * Fetch (key 1): consumers and follower replicas read log data. v7 fetch sessions (KIP-227); v9 CurrentLeaderEpoch
 * (KIP-320); v12 flexible, LastFetchedEpoch / DivergingEpoch (KIP-595); v13 topic IDs (KIP-516); v15 ReplicaState
 * (KIP-903); v16 NodeEndpoints (KIP-951); v17 ReplicaDirectoryId (KIP-853); v18 HighWatermark (KIP-1166).
 */
import { api, array, field, struct } from '../schema.js';

export const Fetch = api({
  key: 1,
  name: 'Fetch',
  versions: '4-18',
  flexible: '12+',
  listeners: ['broker', 'controller'],
  request: [
    field('clusterId', 'string', '12+', { nullable: '12+', default: null, tag: 0 }),
    field('replicaId', 'int32', '0-14', { default: -1 }),
    struct('replicaState', '15+', [
      field('replicaId', 'int32', '15+', { default: -1 }),
      field('replicaEpoch', 'int64', '15+', { default: -1 }),
    ], { tag: 1 }),
    field('maxWaitMs', 'int32', '0+'),
    field('minBytes', 'int32', '0+'),
    field('maxBytes', 'int32', '3+', { default: 0x7fffffff }),
    field('isolationLevel', 'int8', '4+'),
    field('sessionId', 'int32', '7+'),
    field('sessionEpoch', 'int32', '7+', { default: -1 }),
    array('topics', '0+', [
      field('topic', 'string', '0-12'),
      field('topicId', 'uuid', '13+'),
      array('partitions', '0+', [
        field('partition', 'int32', '0+'),
        field('currentLeaderEpoch', 'int32', '9+', { default: -1 }),
        field('fetchOffset', 'int64', '0+'),
        field('lastFetchedEpoch', 'int32', '12+', { default: -1 }),
        field('logStartOffset', 'int64', '5+', { default: -1 }),
        field('partitionMaxBytes', 'int32', '0+'),
        field('replicaDirectoryId', 'uuid', '17+', { tag: 0 }),
        field('highWatermark', 'int64', '18+', { default: Infinity, tag: 1 }),
      ]),
    ]),
    array('forgottenTopicsData', '7+', [
      field('topic', 'string', '7-12'),
      field('topicId', 'uuid', '13+'),
      field('partitions', '[]int32', '7+'),
    ]),
    field('rackId', 'string', '11+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '1+'),
    field('errorCode', 'int16', '7+'),
    field('sessionId', 'int32', '7+'),
    array('responses', '0+', [
      field('topic', 'string', '0-12'),
      field('topicId', 'uuid', '13+'),
      array('partitions', '0+', [
        field('partitionIndex', 'int32', '0+'),
        field('errorCode', 'int16', '0+'),
        field('highWatermark', 'int64', '0+'),
        field('lastStableOffset', 'int64', '4+', { default: -1 }),
        field('logStartOffset', 'int64', '5+', { default: -1 }),
        struct('divergingEpoch', '12+', [
          field('epoch', 'int32', '12+', { default: -1 }),
          field('endOffset', 'int64', '12+', { default: -1 }),
        ], { tag: 0 }),
        struct('currentLeader', '12+', [
          field('leaderId', 'int32', '12+', { default: -1 }),
          field('leaderEpoch', 'int32', '12+', { default: -1 }),
        ], { tag: 1 }),
        struct('snapshotId', '12+', [
          field('endOffset', 'int64', '0+', { default: -1 }),
          field('epoch', 'int32', '0+', { default: -1 }),
        ], { tag: 2 }),
        array('abortedTransactions', '4+', [
          field('producerId', 'int64', '4+'),
          field('firstOffset', 'int64', '4+'),
        ], { nullable: '4+' }),
        field('preferredReadReplica', 'int32', '11+', { default: -1 }),
        field('records', 'records', '0+', { nullable: '0+' }),
      ]),
    ]),
    array('nodeEndpoints', '16+', [
      field('nodeId', 'int32', '16+'),
      field('host', 'string', '16+'),
      field('port', 'int32', '16+'),
      field('rack', 'string', '16+', { nullable: '16+', default: null }),
    ], { tag: 0 }),
  ],
});
