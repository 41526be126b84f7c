/** DescribeShareGroupOffsets (key 90): reads share groups' start offsets per partition (KIP-932). v1 adds lag (KIP-1226). */
import { api, array, field } from '../schema.js';

export const DescribeShareGroupOffsets = api({
  key: 90,
  name: 'DescribeShareGroupOffsets',
  versions: '0-1',
  flexible: '0+',
  listeners: ['broker'],
  request: [
    array('groups', '0+', [
      field('groupId', 'string', '0+'),
      array('topics', '0+', [
        field('topicName', 'string', '0+'),
        field('partitions', '[]int32', '0+'),
      ], { nullable: '0+' }),
    ]),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    array('groups', '0+', [
      field('groupId', 'string', '0+'),
      array('topics', '0+', [
        field('topicName', 'string', '0+'),
        field('topicId', 'uuid', '0+'),
        array('partitions', '0+', [
          field('partitionIndex', 'int32', '0+'),
          field('startOffset', 'int64', '0+'),
          field('leaderEpoch', 'int32', '0+'),
          field('lag', 'int64', '1+', { default: -1 }),
          field('errorCode', 'int16', '0+'),
          field('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
        ]),
      ]),
      field('errorCode', 'int16', '0+'),
      field('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
    ]),
  ],
});
