/** AlterPartition (key 56): a partition leader asks the controller to change its ISR (KIP-497, renamed by KIP-841). v2, the 4.0 baseline, names topics by ID (KIP-841); v3 sends the ISR with broker epochs (KIP-903). */
import { api, array, field } from '../schema.js';

export const AlterPartition = api({
  key: 56,
  name: 'AlterPartition',
  versions: '2-3',
  flexible: '0+',
  listeners: ['controller'],
  request: [
    field('brokerId', 'int32', '0+'),
    field('brokerEpoch', 'int64', '0+', { default: -1 }),
    array('topics', '0+', [
      field('topicId', 'uuid', '2+'),
      array('partitions', '0+', [
        field('partitionIndex', 'int32', '0+'),
        field('leaderEpoch', 'int32', '0+'),
        field('newIsr', '[]int32', '0-2'),
        array('newIsrWithEpochs', '3+', [
          field('brokerId', 'int32', '3+'),
          field('brokerEpoch', 'int64', '3+', { default: -1 }),
        ]),
        field('leaderRecoveryState', 'int8', '1+'),
        field('partitionEpoch', 'int32', '0+'),
      ]),
    ]),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    array('topics', '0+', [
      field('topicId', 'uuid', '2+'),
      array('partitions', '0+', [
        field('partitionIndex', 'int32', '0+'),
        field('errorCode', 'int16', '0+'),
        field('leaderId', 'int32', '0+'),
        field('leaderEpoch', 'int32', '0+'),
        field('isr', '[]int32', '0+'),
        field('leaderRecoveryState', 'int8', '1+'),
        field('partitionEpoch', 'int32', '0+'),
      ]),
    ]),
  ],
});
