/**
 * WriteTxnMarkers (key 27): the transaction coordinator asks partition leaders to write COMMIT / ABORT control
 * records (KIP-98). v0 was dropped in Kafka 4.0, so v1 (flexible) is the floor; v2 carries the transaction version
 * of each marker (KIP-1228).
 */
import { api, array, field } from '../schema.js';

export const WriteTxnMarkers = api({
  key: 27,
  name: 'WriteTxnMarkers',
  versions: '1-2',
  flexible: '1+',
  listeners: ['broker'],
  request: [
    array('markers', '0+', [
      field('producerId', 'int64', '0+'),
      field('producerEpoch', 'int16', '0+'),
      field('transactionResult', 'bool', '0+'),
      array('topics', '0+', [
        field('name', 'string', '0+'),
        field('partitionIndexes', '[]int32', '0+'),
      ]),
      field('coordinatorEpoch', 'int32', '0+'),
      field('transactionVersion', 'int8', '2+'),
    ]),
  ],
  response: [
    array('markers', '0+', [
      field('producerId', 'int64', '0+'),
      array('topics', '0+', [
        field('name', 'string', '0+'),
        array('partitions', '0+', [
          field('partitionIndex', 'int32', '0+'),
          field('errorCode', 'int16', '0+'),
        ]),
      ]),
    ]),
  ],
});
