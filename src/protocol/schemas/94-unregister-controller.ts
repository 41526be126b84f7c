/** UnregisterController (key 94): removes a KRaft controller's registration from the cluster metadata. */
import { api, field } from '../schema.js';

export const UnregisterController = api({
  key: 94,
  name: 'UnregisterController',
  versions: '0',
  flexible: '0+',
  listeners: ['broker', 'controller'],
  request: [
    field('controllerId', 'int32', '0+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    field('errorMessage', 'string', '0+', { nullable: '0+' }),
  ],
});
