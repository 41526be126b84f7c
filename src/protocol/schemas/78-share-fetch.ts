/** ShareFetch (key 78): a share-group consumer fetches acquired records and acknowledges earlier ones within a share session (KIP-932). v1 is the baseline; v2 adds the acquire mode (KIP-1206) and renew acknowledgements (KIP-1222). */
import { api, array, field, struct } from '../schema.js';

export const ShareFetch = api({
  key: 78,
  name: 'ShareFetch',
  versions: '1-2',
  flexible: '0+',
  listeners: ['broker'],
  request: [
    field('groupId', 'string', '0+', { nullable: '0+', default: null }),
    field('memberId', 'string', '0+', { nullable: '0+' }),
    field('shareSessionEpoch', 'int32', '0+'),
    field('maxWaitMs', 'int32', '0+'),
    field('minBytes', 'int32', '0+'),
    field('maxBytes', 'int32', '0+', { default: 0x7fffffff }),
    field('maxRecords', 'int32', '1+'),
    field('batchSize', 'int32', '1+'),
    field('shareAcquireMode', 'int8', '2+'),
    field('isRenewAck', 'bool', '2+'),
    array('topics', '0+', [
      field('topicId', 'uuid', '0+'),
      array('partitions', '0+', [
        field('partitionIndex', 'int32', '0+'),
        field('partitionMaxBytes', 'int32', '0'),
        array('acknowledgementBatches', '0+', [
          field('firstOffset', 'int64', '0+'),
          field('lastOffset', 'int64', '0+'),
          field('acknowledgeTypes', '[]int8', '0+'),
        ]),
      ]),
    ]),
    array('forgottenTopicsData', '0+', [
      field('topicId', 'uuid', '0+'),
      field('partitions', '[]int32', '0+'),
    ]),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    field('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
    field('acquisitionLockTimeoutMs', 'int32', '1+'),
    array('responses', '0+', [
      field('topicId', 'uuid', '0+'),
      array('partitions', '0+', [
        field('partitionIndex', 'int32', '0+'),
        field('errorCode', 'int16', '0+'),
        field('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
        field('acknowledgeErrorCode', 'int16', '0+'),
        field('acknowledgeErrorMessage', 'string', '0+', { nullable: '0+', default: null }),
        struct('currentLeader', '0+', [
          field('leaderId', 'int32', '0+'),
          field('leaderEpoch', 'int32', '0+'),
        ]),
        field('records', 'records', '0+', { nullable: '0' }),
        array('acquiredRecords', '0+', [
          field('firstOffset', 'int64', '0+'),
          field('lastOffset', 'int64', '0+'),
          field('deliveryCount', 'int16', '0+'),
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
