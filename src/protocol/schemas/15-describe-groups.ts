/**
 * DescribeGroups (key 15): state and members of classic groups. v3 authorized operations (KIP-430); v4
 * GroupInstanceId (KIP-345); v5 flexible; v6 GROUP_ID_NOT_FOUND (KIP-1043).
 */
import { api, array, field } from '../schema.js';

export const DescribeGroups = api({
  key: 15,
  name: 'DescribeGroups',
  versions: '0-6',
  flexible: '5+',
  listeners: ['broker'],
  request: [
    field('groups', '[]string', '0+'),
    field('includeAuthorizedOperations', 'bool', '3+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '1+'),
    array('groups', '0+', [
      field('errorCode', 'int16', '0+'),
      field('errorMessage', 'string', '6+', { nullable: '6+', default: null }),
      field('groupId', 'string', '0+'),
      field('groupState', 'string', '0+'),
      field('protocolType', 'string', '0+'),
      field('protocolData', 'string', '0+'),
      array('members', '0+', [
        field('memberId', 'string', '0+'),
        field('groupInstanceId', 'string', '4+', { nullable: '4+', default: null }),
        field('clientId', 'string', '0+'),
        field('clientHost', 'string', '0+'),
        field('memberMetadata', 'bytes', '0+'),
        field('memberAssignment', 'bytes', '0+'),
      ]),
      field('authorizedOperations', 'int32', '3+', { default: -2147483648 }),
    ]),
  ],
});
