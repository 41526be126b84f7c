/**
 * SyncGroup (key 14): classic group, second half of a rebalance: the leader's assignment goes out. v3
 * GroupInstanceId (KIP-345); v4 flexible; v5 ProtocolType / ProtocolName (KIP-559).
 */
import { api, array, field } from '../schema.js';

export const SyncGroup = api({
  key: 14,
  name: 'SyncGroup',
  versions: '0-5',
  flexible: '4+',
  listeners: ['broker'],
  request: [
    field('groupId', 'string', '0+'),
    field('generationId', 'int32', '0+'),
    field('memberId', 'string', '0+'),
    field('groupInstanceId', 'string', '3+', { nullable: '3+', default: null }),
    field('protocolType', 'string', '5+', { nullable: '5+', default: null }),
    field('protocolName', 'string', '5+', { nullable: '5+', default: null }),
    array('assignments', '0+', [
      field('memberId', 'string', '0+'),
      field('assignment', 'bytes', '0+'),
    ]),
  ],
  response: [
    field('throttleTimeMs', 'int32', '1+'),
    field('errorCode', 'int16', '0+'),
    field('protocolType', 'string', '5+', { nullable: '5+', default: null }),
    field('protocolName', 'string', '5+', { nullable: '5+', default: null }),
    field('assignment', 'bytes', '0+'),
  ],
});
