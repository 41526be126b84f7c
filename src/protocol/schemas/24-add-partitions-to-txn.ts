/**
 * AddPartitionsToTxn (key 24): a transactional producer enlists partitions in its open transaction (KIP-98). v2
 * may return PRODUCER_FENCED (KIP-588); v3 flexible (KIP-482); v4 is the broker-to-coordinator form: several
 * transactions per request and VerifyOnly checks before appending (KIP-890); v5 may return TRANSACTION_ABORTABLE
 * (KIP-890).
 */
import { api, array, field } from '../schema.js';

const topicFields = [
  field('name', 'string', '0+'),
  field('partitions', '[]int32', '0+'),
];

const partitionResultFields = [
  field('partitionIndex', 'int32', '0+'),
  field('partitionErrorCode', 'int16', '0+'),
];

const topicResultFields = [
  field('name', 'string', '0+'),
  array('resultsByPartition', '0+', partitionResultFields),
];

export const AddPartitionsToTxn = api({
  key: 24,
  name: 'AddPartitionsToTxn',
  versions: '0-5',
  flexible: '3+',
  listeners: ['broker'],
  request: [
    array('transactions', '4+', [
      field('transactionalId', 'string', '4+'),
      field('producerId', 'int64', '4+'),
      field('producerEpoch', 'int16', '4+'),
      field('verifyOnly', 'bool', '4+'),
      array('topics', '4+', topicFields),
    ]),
    field('v3AndBelowTransactionalId', 'string', '0-3'),
    field('v3AndBelowProducerId', 'int64', '0-3'),
    field('v3AndBelowProducerEpoch', 'int16', '0-3'),
    array('v3AndBelowTopics', '0-3', topicFields),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '4+'),
    array('resultsByTransaction', '4+', [
      field('transactionalId', 'string', '4+'),
      array('topicResults', '4+', topicResultFields),
    ]),
    array('resultsByTopicV3AndBelow', '0-3', topicResultFields),
  ],
});
