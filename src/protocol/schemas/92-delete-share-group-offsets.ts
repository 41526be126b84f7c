/** DeleteShareGroupOffsets (key 92): removes an empty share group's offsets for whole topics (KIP-932). */
import { api, array, field } from '../schema.js';

export const DeleteShareGroupOffsets = api({
  key: 92,
  name: 'DeleteShareGroupOffsets',
  versions: '0',
  flexible: '0+',
  listeners: ['broker'],
  request: [
    field('groupId', 'string', '0+'),
    array('topics', '0+', [
      field('topicName', 'string', '0+'),
    ]),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    field('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
    array('responses', '0+', [
      field('topicName', 'string', '0+'),
      field('topicId', 'uuid', '0+'),
      field('errorCode', 'int16', '0+'),
      field('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
    ]),
  ],
});
