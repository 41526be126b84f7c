/** RemoveRaftVoter (key 81): removes a voter from the dynamic KRaft quorum (KIP-853). */
import { api, field } from '../schema.js';

export const RemoveRaftVoter = api({
  key: 81,
  name: 'RemoveRaftVoter',
  versions: '0',
  flexible: '0+',
  listeners: ['controller', 'broker'],
  request: [
    field('clusterId', 'string', '0+', { nullable: '0+' }),
    field('voterId', 'int32', '0+'),
    field('voterDirectoryId', 'uuid', '0+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    field('errorMessage', 'string', '0+', { nullable: '0+' }),
  ],
});
