/**
 * DescribeConfigs (key 32): reads topic, broker and other resource configs (KIP-133). v0 was dropped in Kafka 4.0;
 * v1 adds config sources and synonyms (KIP-226); v3 adds config type and documentation (KIP-569); v4 flexible
 * (KIP-482).
 */
import { api, array, field } from '../schema.js';

export const DescribeConfigs = api({
  key: 32,
  name: 'DescribeConfigs',
  versions: '1-4',
  flexible: '4+',
  listeners: ['broker', 'controller'],
  request: [
    array('resources', '0+', [
      field('resourceType', 'int8', '0+'),
      field('resourceName', 'string', '0+'),
      field('configurationKeys', '[]string', '0+', { nullable: '0+' }),
    ]),
    field('includeSynonyms', 'bool', '1+'),
    field('includeDocumentation', 'bool', '3+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    array('results', '0+', [
      field('errorCode', 'int16', '0+'),
      field('errorMessage', 'string', '0+', { nullable: '0+' }),
      field('resourceType', 'int8', '0+'),
      field('resourceName', 'string', '0+'),
      array('configs', '0+', [
        field('name', 'string', '0+'),
        field('value', 'string', '0+', { nullable: '0+' }),
        field('readOnly', 'bool', '0+'),
        field('configSource', 'int8', '1+', { default: -1 }),
        field('isSensitive', 'bool', '0+'),
        array('synonyms', '1+', [
          field('name', 'string', '1+'),
          field('value', 'string', '1+', { nullable: '0+' }),
          field('source', 'int8', '1+'),
        ]),
        field('configType', 'int8', '3+'),
        field('documentation', 'string', '3+', { nullable: '0+' }),
      ]),
    ]),
  ],
});
