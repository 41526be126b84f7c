/**
 * DescribeAcls (key 29): lists the ACLs matching a filter. v0 was dropped in Kafka 4.0; v1 adds the resource
 * pattern type (prefixed ACLs, KIP-290); v2 flexible (KIP-482); v3 allows the USER resource type (KIP-373).
 */
import { api, array, field } from '../schema.js';

export const DescribeAcls = api({
  key: 29,
  name: 'DescribeAcls',
  versions: '1-3',
  flexible: '2+',
  listeners: ['broker', 'controller'],
  request: [
    field('resourceTypeFilter', 'int8', '0+'),
    field('resourceNameFilter', 'string', '0+', { nullable: '0+' }),
    field('patternTypeFilter', 'int8', '1+', { default: 3 }),
    field('principalFilter', 'string', '0+', { nullable: '0+' }),
    field('hostFilter', 'string', '0+', { nullable: '0+' }),
    field('operation', 'int8', '0+'),
    field('permissionType', 'int8', '0+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    field('errorMessage', 'string', '0+', { nullable: '0+' }),
    array('resources', '0+', [
      field('resourceType', 'int8', '0+'),
      field('resourceName', 'string', '0+'),
      field('patternType', 'int8', '1+', { default: 3 }),
      array('acls', '0+', [
        field('principal', 'string', '0+'),
        field('host', 'string', '0+'),
        field('operation', 'int8', '0+'),
        field('permissionType', 'int8', '0+'),
      ]),
    ]),
  ],
});
