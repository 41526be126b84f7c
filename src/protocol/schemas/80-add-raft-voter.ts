/** AddRaftVoter (key 80): adds a voter to the dynamic KRaft quorum (KIP-853). v1 lets the caller choose whether to wait for the change to commit (KIP-1186). */
import { api, array, field } from '../schema.js';

export const AddRaftVoter = api({
  key: 80,
  name: 'AddRaftVoter',
  versions: '0-1',
  flexible: '0+',
  listeners: ['controller', 'broker'],
  request: [
    field('clusterId', 'string', '0+', { nullable: '0+' }),
    field('timeoutMs', 'int32', '0+'),
    field('voterId', 'int32', '0+'),
    field('voterDirectoryId', 'uuid', '0+'),
    array('listeners', '0+', [
      field('name', 'string', '0+'),
      field('host', 'string', '0+'),
      field('port', 'uint16', '0+'),
    ]),
    field('ackWhenCommitted', 'bool', '1+', { default: true }),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    field('errorMessage', 'string', '0+', { nullable: '0+' }),
  ],
});
