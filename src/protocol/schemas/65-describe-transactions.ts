/** DescribeTransactions (key 65): describes transactional ids' state at their coordinator (KIP-664). */
import { api, array, field } from '../schema.js';

export const DescribeTransactions = api({
  key: 65,
  name: 'DescribeTransactions',
  versions: '0',
  flexible: '0+',
  listeners: ['broker'],
  request: [
    field('transactionalIds', '[]string', '0+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    array('transactionStates', '0+', [
      field('errorCode', 'int16', '0+'),
      field('transactionalId', 'string', '0+'),
      field('transactionState', 'string', '0+'),
      field('transactionTimeoutMs', 'int32', '0+'),
      field('transactionStartTimeMs', 'int64', '0+'),
      field('producerId', 'int64', '0+'),
      field('producerEpoch', 'int16', '0+'),
      array('topics', '0+', [
        field('topic', 'string', '0+'),
        field('partitions', '[]int32', '0+'),
      ]),
    ]),
  ],
});
