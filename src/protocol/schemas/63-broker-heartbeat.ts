/** BrokerHeartbeat (key 63): a registered broker's periodic lease renewal with the controller, which answers with fencing and shutdown decisions (KIP-631). v1 reports offline log dirs (KIP-858); v2 reports cordoned log dirs (KIP-1066). */
import { api, field } from '../schema.js';

export const BrokerHeartbeat = api({
  key: 63,
  name: 'BrokerHeartbeat',
  versions: '0-2',
  flexible: '0+',
  listeners: ['controller'],
  request: [
    field('brokerId', 'int32', '0+'),
    field('brokerEpoch', 'int64', '0+', { default: -1 }),
    field('currentMetadataOffset', 'int64', '0+'),
    field('wantFence', 'bool', '0+'),
    field('wantShutDown', 'bool', '0+'),
    field('offlineLogDirs', '[]uuid', '1+', { tag: 0 }),
    field('cordonedLogDirs', '[]uuid', '2+', { nullable: '2+', default: null, tag: 1 }),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    field('isCaughtUp', 'bool', '0+'),
    field('isFenced', 'bool', '0+', { default: true }),
    field('shouldShutDown', 'bool', '0+'),
  ],
});
