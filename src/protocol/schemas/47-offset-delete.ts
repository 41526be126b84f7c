/**
 * OffsetDelete (key 47): deletes a consumer group's committed offsets for given partitions (KIP-496). Never
 * flexible.
 */
import { api, array, field } from '../schema.js';

export const OffsetDelete = api({
  key: 47,
  name: 'OffsetDelete',
  versions: '0',
  flexible: 'none',
  listeners: ['broker'],
  request: [
    field('groupId', 'string', '0+'),
    array('topics', '0+', [
      field('name', 'string', '0+'),
      array('partitions', '0+', [
        field('partitionIndex', 'int32', '0+'),
      ]),
    ]),
  ],
  response: [
    field('errorCode', 'int16', '0+'),
    field('throttleTimeMs', 'int32', '0+'),
    array('topics', '0+', [
      field('name', 'string', '0+'),
      array('partitions', '0+', [
        field('partitionIndex', 'int32', '0+'),
        field('errorCode', 'int16', '0+'),
      ]),
    ]),
  ],
});
