/** DescribeQuorum (key 55): reports the KRaft metadata quorum's leader, voters and observers (KIP-595). v1 adds fetch and caught-up times (KIP-836); v2 adds error messages, directory ids and node listeners (KIP-853). */
import { api, array, field } from '../schema.js';

const replicaStateFields = [
  field('replicaId', 'int32', '0+'),
  field('replicaDirectoryId', 'uuid', '2+'),
  field('logEndOffset', 'int64', '0+'),
  field('lastFetchTimestamp', 'int64', '1+', { default: -1 }),
  field('lastCaughtUpTimestamp', 'int64', '1+', { default: -1 }),
];

export const DescribeQuorum = api({
  key: 55,
  name: 'DescribeQuorum',
  versions: '0-2',
  flexible: '0+',
  listeners: ['broker', 'controller'],
  request: [
    array('topics', '0+', [
      field('topicName', 'string', '0+'),
      array('partitions', '0+', [
        field('partitionIndex', 'int32', '0+'),
      ]),
    ]),
  ],
  response: [
    field('errorCode', 'int16', '0+'),
    field('errorMessage', 'string', '2+', { nullable: '2+' }),
    array('topics', '0+', [
      field('topicName', 'string', '0+'),
      array('partitions', '0+', [
        field('partitionIndex', 'int32', '0+'),
        field('errorCode', 'int16', '0+'),
        field('errorMessage', 'string', '2+', { nullable: '2+' }),
        field('leaderId', 'int32', '0+'),
        field('leaderEpoch', 'int32', '0+'),
        field('highWatermark', 'int64', '0+'),
        array('currentVoters', '0+', replicaStateFields),
        array('observers', '0+', replicaStateFields),
      ]),
    ]),
    array('nodes', '2+', [
      field('nodeId', 'int32', '2+'),
      array('listeners', '2+', [
        field('name', 'string', '2+'),
        field('host', 'string', '2+'),
        field('port', 'uint16', '2+'),
      ]),
    ]),
  ],
});
