/**
 * DescribeDelegationToken (key 41): lists delegation tokens, optionally by owner (KIP-48). v0 was dropped in Kafka
 * 4.0; v2 flexible (KIP-482); v3 reports the token requester (KIP-373).
 */
import { api, array, field } from '../schema.js';

export const DescribeDelegationToken = api({
  key: 41,
  name: 'DescribeDelegationToken',
  versions: '1-3',
  flexible: '2+',
  listeners: ['broker', 'controller'],
  request: [
    array('owners', '0+', [
      field('principalType', 'string', '0+'),
      field('principalName', 'string', '0+'),
    ], { nullable: '0+' }),
  ],
  response: [
    field('errorCode', 'int16', '0+'),
    array('tokens', '0+', [
      field('principalType', 'string', '0+'),
      field('principalName', 'string', '0+'),
      field('tokenRequesterPrincipalType', 'string', '3+'),
      field('tokenRequesterPrincipalName', 'string', '3+'),
      field('issueTimestamp', 'int64', '0+'),
      field('expiryTimestamp', 'int64', '0+'),
      field('maxTimestamp', 'int64', '0+'),
      field('tokenId', 'string', '0+'),
      field('hmac', 'bytes', '0+'),
      array('renewers', '0+', [
        field('principalType', 'string', '0+'),
        field('principalName', 'string', '0+'),
      ]),
    ]),
    field('throttleTimeMs', 'int32', '0+'),
  ],
});
