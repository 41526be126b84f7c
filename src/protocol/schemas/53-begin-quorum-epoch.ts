/** BeginQuorumEpoch (key 53): a newly elected KRaft leader announces its epoch to the voters (KIP-595). v1 is flexible and carries voter directory ids and the leader's endpoints (KIP-853). */
import { api, array, field } from '../schema.js';

export const BeginQuorumEpoch = api({
  key: 53,
  name: 'BeginQuorumEpoch',
  versions: '0-1',
  flexible: '1+',
  listeners: ['controller'],
  request: [
    field('clusterId', 'string', '0+', { nullable: '0+', default: null }),
    field('voterId', 'int32', '1+', { default: -1 }),
    array('topics', '0+', [
      field('topicName', 'string', '0+'),
      array('partitions', '0+', [
        field('partitionIndex', 'int32', '0+'),
        field('voterDirectoryId', 'uuid', '1+'),
        field('leaderId', 'int32', '0+'),
        field('leaderEpoch', 'int32', '0+'),
      ]),
    ]),
    array('leaderEndpoints', '1+', [
      field('name', 'string', '1+'),
      field('host', 'string', '1+'),
      field('port', 'uint16', '1+'),
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
      ]),
    ]),
    array('nodeEndpoints', '1+', [
      field('nodeId', 'int32', '1+'),
      field('host', 'string', '1+'),
      field('port', 'uint16', '1+'),
    ], { tag: 0 }),
  ],
});
