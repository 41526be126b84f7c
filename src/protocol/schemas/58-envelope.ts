/** Envelope (key 58): a broker forwards a client's admin request to the controller, wrapped with the client's principal and address (KIP-590). */
import { api, field } from '../schema.js';

export const Envelope = api({
  key: 58,
  name: 'Envelope',
  versions: '0',
  flexible: '0+',
  listeners: ['controller'],
  request: [
    field('requestData', 'bytes', '0+'),
    field('requestPrincipal', 'bytes', '0+', { nullable: '0+' }),
    field('clientHostAddress', 'bytes', '0+'),
  ],
  response: [
    field('responseData', 'bytes', '0+', { nullable: '0+', default: null }),
    field('errorCode', 'int16', '0+'),
  ],
});
