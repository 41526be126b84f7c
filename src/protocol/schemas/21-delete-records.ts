/** DeleteRecords (key 21): moves partitions' log start offsets forward (KIP-107). v2 flexible. */
import { api, array, field } from '../schema.js';

export const DeleteRecords = api({
  key: 21,
  name: 'DeleteRecords',
  versions: '0-2',
  flexible: '2+',
  listeners: ['broker'],
  request: [
    array('topics', '0+', [
      field('name', 'string', '0+'),
      array('partitions', '0+', [
        field('partitionIndex', 'int32', '0+'),
        field('offset', 'int64', '0+'),
      ]),
    ]),
    field('timeoutMs', 'int32', '0+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    array('topics', '0+', [
      field('name', 'string', '0+'),
      array('partitions', '0+', [
        field('partitionIndex', 'int32', '0+'),
        field('lowWatermark', 'int64', '0+'),
        field('errorCode', 'int16', '0+'),
      ]),
    ]),
  ],
});
