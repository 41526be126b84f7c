/** Vote (key 52): a KRaft candidate asks the other voters for their vote (KIP-595). v1 names voters by id and directory id (KIP-853); v2 adds PreVote, asked without bumping the epoch (KIP-996). */
import { api, array, field } from '../schema.js';

export const Vote = api({
  key: 52,
  name: 'Vote',
  versions: '0-2',
  flexible: '0+',
  listeners: ['controller'],
  request: [
    field('clusterId', 'string', '0+', { nullable: '0+', default: null }),
    field('voterId', 'int32', '1+', { default: -1 }),
    array('topics', '0+', [
      field('topicName', 'string', '0+'),
      array('partitions', '0+', [
        field('partitionIndex', 'int32', '0+'),
        field('replicaEpoch', 'int32', '0+'),
        field('replicaId', 'int32', '0+'),
        field('replicaDirectoryId', 'uuid', '1+'),
        field('voterDirectoryId', 'uuid', '1+'),
        field('lastOffsetEpoch', 'int32', '0+'),
        field('lastOffset', 'int64', '0+'),
        field('preVote', 'bool', '2+'),
      ]),
    ]),
  ],
  response: [
    field('errorCode', 'int16', '0+'),
    array('topics', '0+', [
      field('topicName', 'string', '0+'),
      array('partitions', '0+', [
        field('partitionIndex', 'int32', '0+'),
        field('errorCode', 'int16', '0+'),
        field('leaderId', 'int32', '0+'),
        field('leaderEpoch', 'int32', '0+'),
        field('voteGranted', 'bool', '0+'),
      ]),
    ]),
    array('nodeEndpoints', '1+', [
      field('nodeId', 'int32', '1+'),
      field('host', 'string', '1+'),
      field('port', 'uint16', '1+'),
    ], { tag: 0 }),
  ],
});
