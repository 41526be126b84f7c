/** DeleteShareGroupState (key 86): the share coordinator deletes persisted share-partition state (KIP-932). */
import { api, array, field } from '../schema.js';

export const DeleteShareGroupState = api({
  key: 86,
  name: 'DeleteShareGroupState',
  versions: '0',
  flexible: '0+',
  listeners: ['broker'],
  request: [
    field('groupId', 'string', '0+'),
    array('topics', '0+', [
      field('topicId', 'uuid', '0+'),
      array('partitions', '0+', [
        field('partition', 'int32', '0+'),
      ]),
    ]),
  ],
  response: [
    array('results', '0+', [
      field('topicId', 'uuid', '0+'),
      array('partitions', '0+', [
        field('partition', 'int32', '0+'),
        field('errorCode', 'int16', '0+'),
        field('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
      ]),
    ]),
  ],
});
