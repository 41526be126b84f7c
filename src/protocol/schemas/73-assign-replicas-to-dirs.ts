/** AssignReplicasToDirs (key 73): a broker with several log directories tells the controller which directory holds each replica (KIP-858). */
import { api, array, field } from '../schema.js';

export const AssignReplicasToDirs = api({
  key: 73,
  name: 'AssignReplicasToDirs',
  versions: '0',
  flexible: '0+',
  listeners: ['controller'],
  request: [
    field('brokerId', 'int32', '0+'),
    field('brokerEpoch', 'int64', '0+', { default: -1 }),
    array('directories', '0+', [
      field('id', 'uuid', '0+'),
      array('topics', '0+', [
        field('topicId', 'uuid', '0+'),
        array('partitions', '0+', [
          field('partitionIndex', 'int32', '0+'),
        ]),
      ]),
    ]),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    array('directories', '0+', [
      field('id', 'uuid', '0+'),
      array('topics', '0+', [
        field('topicId', 'uuid', '0+'),
        array('partitions', '0+', [
          field('partitionIndex', 'int32', '0+'),
          field('errorCode', 'int16', '0+'),
        ]),
      ]),
    ]),
  ],
});
