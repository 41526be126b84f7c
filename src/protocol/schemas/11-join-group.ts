/**
 * JoinGroup (key 11): classic group membership, first half of a rebalance. v1 RebalanceTimeoutMs (KIP-62); v4
 * member ID handed out first (KIP-394); v5 GroupInstanceId (KIP-345); v6 flexible; v7 ProtocolType in the response
 * (KIP-559); v8 Reason (KIP-800); v9 SkipAssignment (KIP-814).
 */
import { api, array, field } from '../schema.js';

export const JoinGroup = api({
  key: 11,
  name: 'JoinGroup',
  versions: '0-9',
  flexible: '6+',
  listeners: ['broker'],
  request: [
    field('groupId', 'string', '0+'),
    field('sessionTimeoutMs', 'int32', '0+'),
    field('rebalanceTimeoutMs', 'int32', '1+', { default: -1 }),
    field('memberId', 'string', '0+'),
    field('groupInstanceId', 'string', '5+', { nullable: '5+', default: null }),
    field('protocolType', 'string', '0+'),
    array('protocols', '0+', [
      field('name', 'string', '0+'),
      field('metadata', 'bytes', '0+'),
    ]),
    field('reason', 'string', '8+', { nullable: '8+', default: null }),
  ],
  response: [
    field('throttleTimeMs', 'int32', '2+'),
    field('errorCode', 'int16', '0+'),
    field('generationId', 'int32', '0+', { default: -1 }),
    field('protocolType', 'string', '7+', { nullable: '7+', default: null }),
    field('protocolName', 'string', '0+', { nullable: '7+' }),
    field('leader', 'string', '0+'),
    field('skipAssignment', 'bool', '9+'),
    field('memberId', 'string', '0+'),
    array('members', '0+', [
      field('memberId', 'string', '0+'),
      field('groupInstanceId', 'string', '5+', { nullable: '5+', default: null }),
      field('metadata', 'bytes', '0+'),
    ]),
  ],
});
