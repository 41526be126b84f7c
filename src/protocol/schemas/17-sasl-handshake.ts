/**
 * SaslHandshake (key 17): picks the SASL mechanism. v1 means SaslAuthenticate requests carry the tokens (KIP-152).
 * Never flexible.
 */
import { api, field } from '../schema.js';

export const SaslHandshake = api({
  key: 17,
  name: 'SaslHandshake',
  versions: '0-1',
  flexible: 'none',
  listeners: ['broker', 'controller'],
  request: [
    field('mechanism', 'string', '0+'),
  ],
  response: [
    field('errorCode', 'int16', '0+'),
    field('mechanisms', '[]string', '0+'),
  ],
});
