/** InitializeShareGroupState (key 83): the share coordinator creates the persisted state for share partitions (KIP-932). */
import { api, array, field } from '../schema.js';

export const InitializeShareGroupState = api({
  key: 83,
  name: 'InitializeShareGroupState',
  versions: '0',
  flexible: '0+',
  listeners: ['broker'],
  request: [
    field('groupId', 'string', '0+'),
    array('topics', '0+', [
      field('topicId', 'uuid', '0+'),
      array('partitions', '0+', [
        field('partition', 'int32', '0+'),
        field('stateEpoch', 'int32', '0+'),
        field('startOffset', 'int64', '0+'),
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
