/** Produce (key 0). v9 flexible (KIP-482); v10 adds CurrentLeader / NodeEndpoints (KIP-951); v13 addresses topics by ID (KIP-516). */
import { api, array, field, struct } from '../schema.js';

export const Produce = api({
  key: 0,
  name: 'Produce',
  versions: '3-13',
  flexible: '9+',
  listeners: ['broker'],
  request: [
    field('transactionalId', 'string', '3+', { nullable: '3+', default: null }),
    field('acks', 'int16', '0+'),
    field('timeoutMs', 'int32', '0+'),
    array('topicData', '0+', [
      field('name', 'string', '0-12'),
      field('topicId', 'uuid', '13+'),
      array('partitionData', '0+', [
        field('index', 'int32', '0+'),
        field('records', 'records', '0+', { nullable: '0+' }),
      ]),
    ]),
  ],
  response: [
    array('responses', '0+', [
      field('name', 'string', '0-12'),
      field('topicId', 'uuid', '13+'),
      array('partitionResponses', '0+', [
        field('index', 'int32', '0+'),
        field('errorCode', 'int16', '0+'),
        field('baseOffset', 'int64', '0+'),
        field('logAppendTimeMs', 'int64', '2+', { default: -1 }),
        field('logStartOffset', 'int64', '5+', { default: -1 }),
        array('recordErrors', '8+', [
          field('batchIndex', 'int32', '8+'),
          field('batchIndexErrorMessage', 'string', '8+', { nullable: '8+', default: null }),
        ]),
        field('errorMessage', 'string', '8+', { nullable: '8+', default: null }),
        struct('currentLeader', '10+', [
          field('leaderId', 'int32', '10+', { default: -1 }),
          field('leaderEpoch', 'int32', '10+', { default: -1 }),
        ], { tag: 0 }),
      ]),
    ]),
    field('throttleTimeMs', 'int32', '1+'),
    array('nodeEndpoints', '10+', [
      field('nodeId', 'int32', '10+'),
      field('host', 'string', '10+'),
      field('port', 'int32', '10+'),
      field('rack', 'string', '10+', { nullable: '10+', default: null }),
    ], { tag: 0 }),
  ],
});
