/** BrokerRegistration (key 62): a broker registers its listeners, features and rack with the controller (KIP-631). v1 adds the ZK-migration epoch (KIP-866), v2 log directories (KIP-858), v3 the previous broker epoch (KIP-966); v4 lets a feature's minimum version be 0. */
import { api, array, field } from '../schema.js';

export const BrokerRegistration = api({
  key: 62,
  name: 'BrokerRegistration',
  versions: '0-4',
  flexible: '0+',
  listeners: ['controller'],
  request: [
    field('brokerId', 'int32', '0+'),
    field('clusterId', 'string', '0+'),
    field('incarnationId', 'uuid', '0+'),
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
    field('rack', 'string', '0+', { nullable: '0+' }),
    field('isMigratingZkBroker', 'bool', '1+'),
    field('logDirs', '[]uuid', '2+'),
    field('previousBrokerEpoch', 'int64', '3+', { default: -1 }),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    field('brokerEpoch', 'int64', '0+', { default: -1 }),
  ],
});
