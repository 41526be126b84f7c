/** EndQuorumEpoch (key 54): a KRaft leader resigning tells the voters, naming whom it prefers as successors (KIP-595). v1 is flexible, names candidates by directory id and carries leader endpoints (KIP-853). */
import { api, array, field } from '../schema.js';

export const EndQuorumEpoch = api({
  key: 54,
  name: 'EndQuorumEpoch',
  versions: '0-1',
  flexible: '1+',
  listeners: ['controller'],
  request: [
    field('clusterId', 'string', '0+', { nullable: '0+', default: null }),
    array('topics', '0+', [
      field('topicName', 'string', '0+'),
      array('partitions', '0+', [
        field('partitionIndex', 'int32', '0+'),
        field('leaderId', 'int32', '0+'),
        field('leaderEpoch', 'int32', '0+'),
        field('preferredSuccessors', '[]int32', '0'),
        array('preferredCandidates', '1+', [
          field('candidateId', 'int32', '1+'),
          field('candidateDirectoryId', 'uuid', '1+'),
        ]),
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
