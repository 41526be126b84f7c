/**
 * EndTxn (key 26): a transactional producer asks its coordinator to commit or abort (KIP-98). v2 may return
 * PRODUCER_FENCED (KIP-588); v3 flexible (KIP-482); v4 may return TRANSACTION_ABORTABLE; v5 bumps the epoch on
 * every transaction and returns the new producer id and epoch (KIP-890 part 2).
 */
import { api, field } from '../schema.js';

export const EndTxn = api({
  key: 26,
  name: 'EndTxn',
  versions: '0-5',
  flexible: '3+',
  listeners: ['broker'],
  request: [
    field('transactionalId', 'string', '0+'),
    field('producerId', 'int64', '0+'),
    field('producerEpoch', 'int16', '0+'),
    field('committed', 'bool', '0+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    field('producerId', 'int64', '5+', { default: -1 }),
    field('producerEpoch', 'int16', '5+', { default: -1 }),
  ],
});
