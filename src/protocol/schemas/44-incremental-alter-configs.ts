/**
 * IncrementalAlterConfigs (key 44): sets, deletes, appends to or subtracts from individual config entries
 * (KIP-339). v1 flexible (KIP-482).
 */
import { api, array, field } from '../schema.js';

export const IncrementalAlterConfigs = api({
  key: 44,
  name: 'IncrementalAlterConfigs',
  versions: '0-1',
  flexible: '1+',
  listeners: ['broker', 'controller'],
  request: [
    array('resources', '0+', [
      field('resourceType', 'int8', '0+'),
      field('resourceName', 'string', '0+'),
      array('configs', '0+', [
        field('name', 'string', '0+'),
        field('configOperation', 'int8', '0+'),
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
