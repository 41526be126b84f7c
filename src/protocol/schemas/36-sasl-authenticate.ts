/**
 * SaslAuthenticate (key 36): carries SASL exchange tokens inside Kafka frames (KIP-152). v1 returns the session
 * lifetime for re-authentication (KIP-368); v2 flexible (KIP-482).
 */
import { api, field } from '../schema.js';

export const SaslAuthenticate = api({
  key: 36,
  name: 'SaslAuthenticate',
  versions: '0-2',
  flexible: '2+',
  listeners: ['broker', 'controller'],
  request: [
    field('authBytes', 'bytes', '0+'),
  ],
  response: [
    field('errorCode', 'int16', '0+'),
    field('errorMessage', 'string', '0+', { nullable: '0+' }),
    field('authBytes', 'bytes', '0+'),
    field('sessionLifetimeMs', 'int64', '1+'),
  ],
});
