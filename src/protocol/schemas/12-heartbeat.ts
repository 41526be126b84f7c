/** Heartbeat (key 12): a classic group member stays alive. v3 GroupInstanceId (KIP-345); v4 flexible. */
import { api, field } from '../schema.js';

export const Heartbeat = api({
  key: 12,
  name: 'Heartbeat',
  versions: '0-4',
  flexible: '4+',
  listeners: ['broker'],
  request: [
    field('groupId', 'string', '0+'),
    field('generationId', 'int32', '0+'),
    field('memberId', 'string', '0+'),
    field('groupInstanceId', 'string', '3+', { nullable: '3+', default: null }),
  ],
  response: [
    field('throttleTimeMs', 'int32', '1+'),
    field('errorCode', 'int16', '0+'),
  ],
});
