/**
 * DeleteGroups (key 42): deletes empty consumer groups and their offsets (KIP-229). v2 flexible (KIP-482); v3 adds
 * a per-group error message.
 */
import { api, array, field } from '../schema.js';

export const DeleteGroups = api({
  key: 42,
  name: 'DeleteGroups',
  versions: '0-3',
  flexible: '2+',
  listeners: ['broker'],
  request: [
    field('groupsNames', '[]string', '0+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    array('results', '0+', [
      field('groupId', 'string', '0+'),
      field('errorCode', 'int16', '0+'),
      field('errorMessage', 'string', '3+', { nullable: '3+', default: null }),
    ]),
  ],
});
