/**
 * ExpireDelegationToken (key 40): shortens or ends a delegation token's life (KIP-48). v0 was dropped in Kafka
 * 4.0; v2 flexible (KIP-482).
 */
import { api, field } from '../schema.js';

export const ExpireDelegationToken = api({
  key: 40,
  name: 'ExpireDelegationToken',
  versions: '1-2',
  flexible: '2+',
  listeners: ['broker', 'controller'],
  request: [
    field('hmac', 'bytes', '0+'),
    field('expiryTimePeriodMs', 'int64', '0+'),
  ],
  response: [
    field('errorCode', 'int16', '0+'),
    field('expiryTimestampMs', 'int64', '0+'),
    field('throttleTimeMs', 'int32', '0+'),
  ],
});
