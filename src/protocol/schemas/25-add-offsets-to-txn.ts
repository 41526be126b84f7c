/**
 * AddOffsetsToTxn (key 25): a transactional producer enlists a consumer group's offsets partition in its
 * transaction (KIP-98). v2 may return PRODUCER_FENCED (KIP-588); v3 flexible (KIP-482); v4 may return
 * TRANSACTION_ABORTABLE (KIP-890).
 */
import { api, field } from '../schema.js';

export const AddOffsetsToTxn = api({
  key: 25,
  name: 'AddOffsetsToTxn',
  versions: '0-4',
  flexible: '3+',
  listeners: ['broker'],
  request: [
    field('transactionalId', 'string', '0+'),
    field('producerId', 'int64', '0+'),
    field('producerEpoch', 'int16', '0+'),
    field('groupId', 'string', '0+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
  ],
});
