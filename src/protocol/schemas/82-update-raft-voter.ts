/** UpdateRaftVoter (key 82): a voter tells the KRaft leader its current endpoints and supported kraft.version range (KIP-853). */
import { api, array, field, struct } from '../schema.js';

export const UpdateRaftVoter = api({
  key: 82,
  name: 'UpdateRaftVoter',
  versions: '0',
  flexible: '0+',
  listeners: ['controller'],
  request: [
    field('clusterId', 'string', '0+', { nullable: '0+' }),
    field('currentLeaderEpoch', 'int32', '0+'),
    field('voterId', 'int32', '0+'),
    field('voterDirectoryId', 'uuid', '0+'),
    array('listeners', '0+', [
      field('name', 'string', '0+'),
      field('host', 'string', '0+'),
      field('port', 'uint16', '0+'),
    ]),
    struct('kRaftVersionFeature', '0+', [
      field('minSupportedVersion', 'int16', '0+'),
      field('maxSupportedVersion', 'int16', '0+'),
    ]),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    struct('currentLeader', '0+', [
      field('leaderId', 'int32', '0+', { default: -1 }),
      field('leaderEpoch', 'int32', '0+', { default: -1 }),
      field('host', 'string', '0+'),
      field('port', 'int32', '0+'),
    ], { tag: 0 }),
  ],
});
