/**
 * CreateTopics (key 19). v4 partitions / replication factor may be left to broker defaults (KIP-464); v5 flexible,
 * configs in the response (KIP-525); v6 THROTTLING_QUOTA_EXCEEDED (KIP-599); v7 topic ID in the response
 * (KIP-516).
 */
import { api, array, field } from '../schema.js';

export const CreateTopics = api({
  key: 19,
  name: 'CreateTopics',
  versions: '2-7',
  flexible: '5+',
  listeners: ['broker', 'controller'],
  request: [
    array('topics', '0+', [
      field('name', 'string', '0+'),
      field('numPartitions', 'int32', '0+'),
      field('replicationFactor', 'int16', '0+'),
      array('assignments', '0+', [
        field('partitionIndex', 'int32', '0+'),
        field('brokerIds', '[]int32', '0+'),
      ]),
      array('configs', '0+', [
        field('name', 'string', '0+'),
        field('value', 'string', '0+', { nullable: '0+' }),
      ]),
    ]),
    field('timeoutMs', 'int32', '0+', { default: 60000 }),
    field('validateOnly', 'bool', '1+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '2+'),
    array('topics', '0+', [
      field('name', 'string', '0+'),
      field('topicId', 'uuid', '7+'),
      field('errorCode', 'int16', '0+'),
      field('errorMessage', 'string', '1+', { nullable: '0+' }),
      field('topicConfigErrorCode', 'int16', '5+', { tag: 0 }),
      field('numPartitions', 'int32', '5+', { default: -1 }),
      field('replicationFactor', 'int16', '5+', { default: -1 }),
      array('configs', '5+', [
        field('name', 'string', '5+'),
        field('value', 'string', '5+', { nullable: '5+' }),
        field('readOnly', 'bool', '5+'),
        field('configSource', 'int8', '5+', { default: -1 }),
        field('isSensitive', 'bool', '5+'),
      ], { nullable: '5+' }),
    ]),
  ],
});
