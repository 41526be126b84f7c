/** ListTransactions (key 66): lists transactional ids known to a coordinator, filtered by state and producer (KIP-664). v1 filters by transaction duration (KIP-994); v2 by a transactional id pattern (KIP-1152). */
import { api, array, field } from '../schema.js';

export const ListTransactions = api({
  key: 66,
  name: 'ListTransactions',
  versions: '0-2',
  flexible: '0+',
  listeners: ['broker'],
  request: [
    field('stateFilters', '[]string', '0+'),
    field('producerIdFilters', '[]int64', '0+'),
    field('durationFilter', 'int64', '1+', { default: -1 }),
    field('transactionalIdPattern', 'string', '2+', { nullable: '2+', default: null }),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    field('unknownStateFilters', '[]string', '0+'),
    array('transactionStates', '0+', [
      field('transactionalId', 'string', '0+'),
      field('producerId', 'int64', '0+'),
      field('transactionState', 'string', '0+'),
    ]),
  ],
});
