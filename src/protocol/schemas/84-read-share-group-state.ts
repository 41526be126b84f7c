/** ReadShareGroupState (key 84): a share-partition leader loads its persisted state from the share coordinator (KIP-932). */
import { api, array, field } from '../schema.js';

export const ReadShareGroupState = api({
  key: 84,
  name: 'ReadShareGroupState',
  versions: '0',
  flexible: '0+',
  listeners: ['broker'],
  request: [
    field('groupId', 'string', '0+'),
    array('topics', '0+', [
      field('topicId', 'uuid', '0+'),
      array('partitions', '0+', [
        field('partition', 'int32', '0+'),
        field('leaderEpoch', 'int32', '0+'),
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
        field('stateEpoch', 'int32', '0+'),
        field('startOffset', 'int64', '0+'),
        array('stateBatches', '0+', [
          field('firstOffset', 'int64', '0+'),
          field('lastOffset', 'int64', '0+'),
          field('deliveryState', 'int8', '0+'),
          field('deliveryCount', 'int16', '0+'),
        ]),
      ]),
    ]),
  ],
});
