/**
 * FindCoordinator (key 10): which broker coordinates a group, transaction or share group. v1 KeyType; v3 flexible;
 * v4 batched CoordinatorKeys (KIP-699); v5 TRANSACTION_ABORTABLE (KIP-890); v6 share groups (KIP-932).
 */
import { api, array, field } from '../schema.js';

export const FindCoordinator = api({
  key: 10,
  name: 'FindCoordinator',
  versions: '0-6',
  flexible: '3+',
  listeners: ['broker'],
  request: [
    field('key', 'string', '0-3'),
    field('keyType', 'int8', '1+'),
    field('coordinatorKeys', '[]string', '4+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '1+'),
    field('errorCode', 'int16', '0-3'),
    field('errorMessage', 'string', '1-3', { nullable: '1-3' }),
    field('nodeId', 'int32', '0-3'),
    field('host', 'string', '0-3'),
    field('port', 'int32', '0-3'),
    array('coordinators', '4+', [
      field('key', 'string', '4+'),
      field('nodeId', 'int32', '4+'),
      field('host', 'string', '4+'),
      field('port', 'int32', '4+'),
      field('errorCode', 'int16', '4+'),
      field('errorMessage', 'string', '4+', { nullable: '4+' }),
    ]),
  ],
});
