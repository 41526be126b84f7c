/** ReadShareGroupStateSummary (key 87): reads the start offset and epoch of share partitions, for describing offsets (KIP-932). v1 adds the delivery-complete count (KIP-1226). */
import { api, array, field } from '../schema.js';

export const ReadShareGroupStateSummary = api({
  key: 87,
  name: 'ReadShareGroupStateSummary',
  versions: '0-1',
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
        field('leaderEpoch', 'int32', '0+'),
        field('startOffset', 'int64', '0+'),
        field('deliveryCompleteCount', 'int32', '1+', { default: -1 }),
      ]),
    ]),
  ],
});
