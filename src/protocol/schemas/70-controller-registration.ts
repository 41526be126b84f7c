/** ControllerRegistration (key 70): a KRaft controller registers its listeners and supported features with the active controller (KIP-919). */
import { api, array, field } from '../schema.js';

export const ControllerRegistration = api({
  key: 70,
  name: 'ControllerRegistration',
  versions: '0',
  flexible: '0+',
  listeners: ['controller'],
  request: [
    field('controllerId', 'int32', '0+'),
    field('incarnationId', 'uuid', '0+'),
    field('zkMigrationReady', 'bool', '0+'),
    array('listeners', '0+', [
      field('name', 'string', '0+'),
      field('host', 'string', '0+'),
      field('port', 'uint16', '0+'),
      field('securityProtocol', 'int16', '0+'),
    ]),
    array('features', '0+', [
      field('name', 'string', '0+'),
      field('minSupportedVersion', 'int16', '0+'),
      field('maxSupportedVersion', 'int16', '0+'),
    ]),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    field('errorMessage', 'string', '0+', { nullable: '0+' }),
  ],
});
