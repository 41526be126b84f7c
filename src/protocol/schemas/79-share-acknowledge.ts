/** ShareAcknowledge (key 79): acknowledges records delivered by ShareFetch without fetching more (KIP-932). v1 is the baseline; v2 adds renew acknowledgements (KIP-1222). */
import { api, array, field, struct } from '../schema.js';

export const ShareAcknowledge = api({
  key: 79,
  name: 'ShareAcknowledge',
  versions: '1-2',
  flexible: '0+',
  listeners: ['broker'],
  request: [
    field('groupId', 'string', '0+', { nullable: '0+', default: null }),
    field('memberId', 'string', '0+', { nullable: '0+' }),
    field('shareSessionEpoch', 'int32', '0+'),
    field('isRenewAck', 'bool', '2+'),
    array('topics', '0+', [
      field('topicId', 'uuid', '0+'),
      array('partitions', '0+', [
        field('partitionIndex', 'int32', '0+'),
        array('acknowledgementBatches', '0+', [
          field('firstOffset', 'int64', '0+'),
          field('lastOffset', 'int64', '0+'),
          field('acknowledgeTypes', '[]int8', '0+'),
        ]),
      ]),
    ]),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    field('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
    field('acquisitionLockTimeoutMs', 'int32', '2+'),
    array('responses', '0+', [
      field('topicId', 'uuid', '0+'),
      array('partitions', '0+', [
        field('partitionIndex', 'int32', '0+'),
        field('errorCode', 'int16', '0+'),
        field('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
        struct('currentLeader', '0+', [
          field('leaderId', 'int32', '0+'),
          field('leaderEpoch', 'int32', '0+'),
        ]),
      ]),
    ]),
    array('nodeEndpoints', '0+', [
      field('nodeId', 'int32', '0+'),
      field('host', 'string', '0+'),
      field('port', 'int32', '0+'),
      field('rack', 'string', '0+', { nullable: '0+', default: null }),
    ]),
  ],
});
