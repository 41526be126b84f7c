/** AlterShareGroupOffsets (key 91): resets an empty share group's start offsets (KIP-932). */
import { api, array, field } from '../schema.js';

export const AlterShareGroupOffsets = api({
  key: 91,
  name: 'AlterShareGroupOffsets',
  versions: '0',
  flexible: '0+',
  listeners: ['broker'],
  request: [
    field('groupId', 'string', '0+'),
    array('topics', '0+', [
      field('topicName', 'string', '0+'),
      array('partitions', '0+', [
        field('partitionIndex', 'int32', '0+'),
        field('startOffset', 'int64', '0+'),
      ]),
    ]),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    field('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
    array('responses', '0+', [
      field('topicName', 'string', '0+'),
      field('topicId', 'uuid', '0+'),
      array('partitions', '0+', [
        field('partitionIndex', 'int32', '0+'),
        field('errorCode', 'int16', '0+'),
        field('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
      ]),
    ]),
  ],
});
