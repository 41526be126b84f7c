/**
 * LeaveGroup (key 13): classic group members leave. v3 batches members with GroupInstanceId (KIP-345); v4
 * flexible; v5 Reason (KIP-800).
 */
import { api, array, field } from '../schema.js';

export const LeaveGroup = api({
  key: 13,
  name: 'LeaveGroup',
  versions: '0-5',
  flexible: '4+',
  listeners: ['broker'],
  request: [
    field('groupId', 'string', '0+'),
    field('memberId', 'string', '0-2'),
    array('members', '3+', [
      field('memberId', 'string', '3+'),
      field('groupInstanceId', 'string', '3+', { nullable: '3+', default: null }),
      field('reason', 'string', '5+', { nullable: '5+', default: null }),
    ]),
  ],
  response: [
    field('throttleTimeMs', 'int32', '1+'),
    field('errorCode', 'int16', '0+'),
    array('members', '3+', [
      field('memberId', 'string', '3+'),
      field('groupInstanceId', 'string', '3+', { nullable: '3+' }),
      field('errorCode', 'int16', '3+'),
    ]),
  ],
});
