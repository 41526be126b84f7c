/** DescribeCluster (key 60): the admin client's view of brokers, controller and cluster id (KIP-700). v1 can describe controller endpoints (KIP-919); v2 can include fenced brokers (KIP-1073). */
import { api, array, field } from '../schema.js';

export const DescribeCluster = api({
  key: 60,
  name: 'DescribeCluster',
  versions: '0-2',
  flexible: '0+',
  listeners: ['broker', 'controller'],
  request: [
    field('includeClusterAuthorizedOperations', 'bool', '0+'),
    field('endpointType', 'int8', '1+', { default: 1 }),
    field('includeFencedBrokers', 'bool', '2+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    field('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
    field('endpointType', 'int8', '1+', { default: 1 }),
    field('clusterId', 'string', '0+'),
    field('controllerId', 'int32', '0+', { default: -1 }),
    array('brokers', '0+', [
      field('brokerId', 'int32', '0+'),
      field('host', 'string', '0+'),
      field('port', 'int32', '0+'),
      field('rack', 'string', '0+', { nullable: '0+', default: null }),
      field('isFenced', 'bool', '2+'),
    ]),
    field('clusterAuthorizedOperations', 'int32', '0+', { default: -2147483648 }),
  ],
});
