/** UnregisterBroker (key 64): removes a decommissioned broker's registration from the cluster metadata (KIP-631). */
import { api, field } from '../schema.js';

export const UnregisterBroker = api({
  key: 64,
  name: 'UnregisterBroker',
  versions: '0',
  flexible: '0+',
  listeners: ['broker', 'controller'],
  request: [
    field('brokerId', 'int32', '0+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    field('errorMessage', 'string', '0+', { nullable: '0+' }),
  ],
});
