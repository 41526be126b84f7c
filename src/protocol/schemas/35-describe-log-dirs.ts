/**
 * DescribeLogDirs (key 35): reports a broker's log directories and the replicas in them (KIP-113). v0 was dropped
 * in Kafka 4.0; v2 flexible (KIP-482); v3 adds a top-level error code (KIP-784); v4 adds total and usable bytes
 * (KIP-827); v5 reports whether a directory is cordoned (KIP-1066).
 */
import { api, array, field } from '../schema.js';

export const DescribeLogDirs = api({
  key: 35,
  name: 'DescribeLogDirs',
  versions: '1-5',
  flexible: '2+',
  listeners: ['broker'],
  request: [
    array('topics', '0+', [
      field('topic', 'string', '0+'),
      field('partitions', '[]int32', '0+'),
    ], { nullable: '0+' }),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '3+'),
    array('results', '0+', [
      field('errorCode', 'int16', '0+'),
      field('logDir', 'string', '0+'),
      array('topics', '0+', [
        field('name', 'string', '0+'),
        array('partitions', '0+', [
          field('partitionIndex', 'int32', '0+'),
          field('partitionSize', 'int64', '0+'),
          field('offsetLag', 'int64', '0+'),
          field('isFutureKey', 'bool', '0+'),
        ]),
      ]),
      field('totalBytes', 'int64', '4+', { default: -1 }),
      field('usableBytes', 'int64', '4+', { default: -1 }),
      field('isCordoned', 'bool', '5+'),
    ]),
  ],
});
