/**
 * AlterConfigs (key 33): replaces the whole config set of a resource (KIP-133; superseded by
 * IncrementalAlterConfigs). v2 flexible (KIP-482).
 */
import { api, array, field } from '../schema.js';

export const AlterConfigs = api({
  key: 33,
  name: 'AlterConfigs',
  versions: '0-2',
  flexible: '2+',
  listeners: ['broker', 'controller'],
  request: [
    array('resources', '0+', [
      field('resourceType', 'int8', '0+'),
      field('resourceName', 'string', '0+'),
      array('configs', '0+', [
        field('name', 'string', '0+'),
        field('value', 'string', '0+', { nullable: '0+' }),
      ]),
    ]),
    field('validateOnly', 'bool', '0+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    array('responses', '0+', [
      field('errorCode', 'int16', '0+'),
      field('errorMessage', 'string', '0+', { nullable: '0+' }),
      field('resourceType', 'int8', '0+'),
      field('resourceName', 'string', '0+'),
    ]),
  ],
});
