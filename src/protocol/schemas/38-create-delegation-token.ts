/**
 * CreateDelegationToken (key 38): issues a delegation token (KIP-48). v0 was dropped in Kafka 4.0; v2 flexible
 * (KIP-482); v3 lets a user create a token on behalf of another owner and reports the requester (KIP-373).
 */
import { api, array, field } from '../schema.js';

export const CreateDelegationToken = api({
  key: 38,
  name: 'CreateDelegationToken',
  versions: '1-3',
  flexible: '2+',
  listeners: ['broker', 'controller'],
  request: [
    field('ownerPrincipalType', 'string', '3+', { nullable: '3+' }),
    field('ownerPrincipalName', 'string', '3+', { nullable: '3+' }),
    array('renewers', '0+', [
      field('principalType', 'string', '0+'),
      field('principalName', 'string', '0+'),
    ]),
    field('maxLifetimeMs', 'int64', '0+'),
  ],
  response: [
    field('errorCode', 'int16', '0+'),
    field('principalType', 'string', '0+'),
    field('principalName', 'string', '0+'),
    field('tokenRequesterPrincipalType', 'string', '3+'),
    field('tokenRequesterPrincipalName', 'string', '3+'),
    field('issueTimestampMs', 'int64', '0+'),
    field('expiryTimestampMs', 'int64', '0+'),
    field('maxTimestampMs', 'int64', '0+'),
    field('tokenId', 'string', '0+'),
    field('hmac', 'bytes', '0+'),
    field('throttleTimeMs', 'int32', '0+'),
  ],
});
