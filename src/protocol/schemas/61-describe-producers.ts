/** DescribeProducers (key 61): lists the active producers on partitions, for finding hanging transactions (KIP-664). */
import { api, array, field } from '../schema.js';

export const DescribeProducers = api({
  key: 61,
  name: 'DescribeProducers',
  versions: '0',
  flexible: '0+',
  listeners: ['broker'],
  request: [
    array('topics', '0+', [
      field('name', 'string', '0+'),
      field('partitionIndexes', '[]int32', '0+'),
    ]),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    array('topics', '0+', [
      field('name', 'string', '0+'),
      array('partitions', '0+', [
        field('partitionIndex', 'int32', '0+'),
        field('errorCode', 'int16', '0+'),
        field('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
        array('activeProducers', '0+', [
          field('producerId', 'int64', '0+'),
          field('producerEpoch', 'int32', '0+'),
          field('lastSequence', 'int32', '0+', { default: -1 }),
          field('lastTimestamp', 'int64', '0+', { default: -1 }),
          field('coordinatorEpoch', 'int32', '0+'),
          field('currentTxnStartOffset', 'int64', '0+', { default: -1 }),
        ]),
      ]),
    ]),
  ],
});
