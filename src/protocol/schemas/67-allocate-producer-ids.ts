/** AllocateProducerIds (key 67): a broker asks the controller for a fresh block of producer ids (KIP-730). */
import { api, field } from '../schema.js';

export const AllocateProducerIds = api({
  key: 67,
  name: 'AllocateProducerIds',
  versions: '0',
  flexible: '0+',
  listeners: ['controller'],
  request: [
    field('brokerId', 'int32', '0+'),
    field('brokerEpoch', 'int64', '0+', { default: -1 }),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    field('producerIdStart', 'int64', '0+'),
    field('producerIdLen', 'int32', '0+'),
  ],
});
