/**
 * Metadata (key 3): brokers, topics, partitions and their leaders. v1 null topics means all; v4
 * AllowAutoTopicCreation; v7 leader epoch (KIP-320); v8 authorized operations (KIP-430); v9 flexible; v10 topic
 * IDs (KIP-516); v11 drops cluster operations (KIP-700); v13 top-level ErrorCode (KIP-1102).
 */
import { api, array, field } from '../schema.js';

export const Metadata = api({
  key: 3,
  name: 'Metadata',
  versions: '0-13',
  flexible: '9+',
  listeners: ['broker'],
  request: [
    array('topics', '0+', [
      field('topicId', 'uuid', '10+'),
      field('name', 'string', '0+', { nullable: '10+' }),
    ], { nullable: '1+' }),
    field('allowAutoTopicCreation', 'bool', '4+', { default: true }),
    field('includeClusterAuthorizedOperations', 'bool', '8-10'),
    field('includeTopicAuthorizedOperations', 'bool', '8+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '3+'),
    array('brokers', '0+', [
      field('nodeId', 'int32', '0+'),
      field('host', 'string', '0+'),
      field('port', 'int32', '0+'),
      field('rack', 'string', '1+', { nullable: '1+', default: null }),
    ]),
    field('clusterId', 'string', '2+', { nullable: '2+', default: null }),
    field('controllerId', 'int32', '1+', { default: -1 }),
    array('topics', '0+', [
      field('errorCode', 'int16', '0+'),
      field('name', 'string', '0+', { nullable: '12+' }),
      field('topicId', 'uuid', '10+'),
      field('isInternal', 'bool', '1+'),
      array('partitions', '0+', [
        field('errorCode', 'int16', '0+'),
        field('partitionIndex', 'int32', '0+'),
        field('leaderId', 'int32', '0+'),
        field('leaderEpoch', 'int32', '7+', { default: -1 }),
        field('replicaNodes', '[]int32', '0+'),
        field('isrNodes', '[]int32', '0+'),
        field('offlineReplicas', '[]int32', '5+'),
      ]),
      field('topicAuthorizedOperations', 'int32', '8+', { default: -2147483648 }),
    ]),
    field('clusterAuthorizedOperations', 'int32', '8-10', { default: -2147483648 }),
    field('errorCode', 'int16', '13+'),
  ],
});
