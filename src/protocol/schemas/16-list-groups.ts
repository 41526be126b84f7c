/**
 * ListGroups (key 16): the groups a broker coordinates. v3 flexible; v4 StatesFilter (KIP-518); v5 TypesFilter
 * (KIP-848).
 */
import { api, array, field } from '../schema.js';

export const ListGroups = api({
  key: 16,
  name: 'ListGroups',
  versions: '0-5',
  flexible: '3+',
  listeners: ['broker'],
  request: [
    field('statesFilter', '[]string', '4+'),
    field('typesFilter', '[]string', '5+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '1+'),
    field('errorCode', 'int16', '0+'),
    array('groups', '0+', [
      field('groupId', 'string', '0+'),
      field('protocolType', 'string', '0+'),
      field('groupState', 'string', '4+'),
      field('groupType', 'string', '5+'),
    ]),
  ],
});
