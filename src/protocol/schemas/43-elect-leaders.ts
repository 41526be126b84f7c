/**
 * ElectLeaders (key 43): triggers preferred or unclean leader election for partitions (KIP-183). v1 adds the
 * election type and a top-level error code (KIP-460); v2 flexible (KIP-482).
 */
import { api, array, field } from '../schema.js';

export const ElectLeaders = api({
  key: 43,
  name: 'ElectLeaders',
  versions: '0-2',
  flexible: '2+',
  listeners: ['broker', 'controller'],
  request: [
    field('electionType', 'int8', '1+'),
    array('topicPartitions', '0+', [
      field('topic', 'string', '0+'),
      field('partitions', '[]int32', '0+'),
    ], { nullable: '0+' }),
    field('timeoutMs', 'int32', '0+', { default: 60000 }),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '1+'),
    array('replicaElectionResults', '0+', [
      field('topic', 'string', '0+'),
      array('partitionResult', '0+', [
        field('partitionId', 'int32', '0+'),
        field('errorCode', 'int16', '0+'),
        field('errorMessage', 'string', '0+', { nullable: '0+' }),
      ]),
    ]),
  ],
});
