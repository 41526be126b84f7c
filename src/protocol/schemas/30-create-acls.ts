/**
 * CreateAcls (key 30): adds ACL bindings. v0 was dropped in Kafka 4.0; v1 adds the resource pattern type
 * (KIP-290); v2 flexible (KIP-482); v3 allows the USER resource type (KIP-373).
 */
import { api, array, field } from '../schema.js';

export const CreateAcls = api({
  key: 30,
  name: 'CreateAcls',
  versions: '1-3',
  flexible: '2+',
  listeners: ['broker', 'controller'],
  request: [
    array('creations', '0+', [
      field('resourceType', 'int8', '0+'),
      field('resourceName', 'string', '0+'),
      field('resourcePatternType', 'int8', '1+', { default: 3 }),
      field('principal', 'string', '0+'),
      field('host', 'string', '0+'),
      field('operation', 'int8', '0+'),
      field('permissionType', 'int8', '0+'),
    ]),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    array('results', '0+', [
      field('errorCode', 'int16', '0+'),
      field('errorMessage', 'string', '0+', { nullable: '0+' }),
    ]),
  ],
});
