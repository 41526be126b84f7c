/**
 * AlterReplicaLogDirs (key 34): moves replicas between log directories on one broker (KIP-113). v0 was dropped in
 * Kafka 4.0; v2 flexible (KIP-482).
 */
import { api, array, field } from '../schema.js';

export const AlterReplicaLogDirs = api({
  key: 34,
  name: 'AlterReplicaLogDirs',
  versions: '1-2',
  flexible: '2+',
  listeners: ['broker'],
  request: [
    array('dirs', '0+', [
      field('path', 'string', '0+'),
      array('topics', '0+', [
        field('name', 'string', '0+'),
        field('partitions', '[]int32', '0+'),
      ]),
    ]),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    array('results', '0+', [
      field('topicName', 'string', '0+'),
      array('partitions', '0+', [
        field('partitionIndex', 'int32', '0+'),
        field('errorCode', 'int16', '0+'),
      ]),
    ]),
  ],
});
