/** StreamsGroupTopologyDescriptionUpdate (key 93): a streams group member pushes its topology description when the broker asks for it (KIP-1331). */
import { api, array, field, struct } from '../schema.js';

const topologyDescriptionNodeFields = [
  field('name', 'string', '0+'),
  field('nodeType', 'int8', '0+'),
  field('sourceTopics', '[]string', '0+'),
  field('sinkTopic', 'string', '0+', { nullable: '0+', default: null }),
  field('stores', '[]string', '0+'),
  field('successors', '[]string', '0+'),
];

const topologyDescriptionSubtopologyFields = [
  field('subtopologyId', 'string', '0+'),
  array('nodes', '0+', topologyDescriptionNodeFields),
];

const topologyDescriptionGlobalStoreFields = [
  struct('source', '0+', topologyDescriptionNodeFields),
  struct('processor', '0+', topologyDescriptionNodeFields),
];

const topologyDescriptionFields = [
  array('subtopologies', '0+', topologyDescriptionSubtopologyFields),
  array('globalStores', '0+', topologyDescriptionGlobalStoreFields),
];

export const StreamsGroupTopologyDescriptionUpdate = api({
  key: 93,
  name: 'StreamsGroupTopologyDescriptionUpdate',
  versions: '0',
  flexible: '0+',
  listeners: ['broker'],
  request: [
    field('groupId', 'string', '0+'),
    field('memberId', 'string', '0+'),
    field('topologyEpoch', 'int32', '0+'),
    struct('topologyDescription', '0+', topologyDescriptionFields),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    field('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
  ],
});
