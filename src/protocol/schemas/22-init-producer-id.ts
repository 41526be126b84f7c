/**
 * InitProducerId (key 22): a producer ID and epoch for idempotent and transactional producers. v2 flexible; v3
 * resume after a bumped epoch (KIP-360); v4 PRODUCER_FENCED (KIP-588); v5 TRANSACTION_ABORTABLE (KIP-890); v6 two-
 * phase commit (KIP-939, unstable).
 */
import { api, field } from '../schema.js';

export const InitProducerId = api({
  key: 22,
  name: 'InitProducerId',
  versions: '0-6',
  flexible: '2+',
  unstable: '6',
  listeners: ['broker'],
  request: [
    field('transactionalId', 'string', '0+', { nullable: '0+' }),
    field('transactionTimeoutMs', 'int32', '0+'),
    field('producerId', 'int64', '3+', { default: -1 }),
    field('producerEpoch', 'int16', '3+', { default: -1 }),
    field('enable2Pc', 'bool', '6+'),
    field('keepPreparedTxn', 'bool', '6+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    field('producerId', 'int64', '0+', { default: -1 }),
    field('producerEpoch', 'int16', '0+'),
    field('ongoingTxnProducerId', 'int64', '6+', { default: -1 }),
    field('ongoingTxnProducerEpoch', 'int16', '6+', { default: -1 }),
  ],
});
