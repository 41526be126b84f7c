/**
 * DeleteTopics (key 20). v4 flexible; v5 ErrorMessage, THROTTLING_QUOTA_EXCEEDED (KIP-599); v6 topics by name or
 * ID (KIP-516).
 */
import { api, array, field } from '../schema.js';

export const DeleteTopics = api({
  key: 20,
  name: 'DeleteTopics',
  versions: '1-6',
  flexible: '4+',
  listeners: ['broker', 'controller'],
  request: [
    array('topics', '6+', [
      field('name', 'string', '6+', { nullable: '6+', default: null }),
      field('topicId', 'uuid', '6+'),
    ]),
    field('topicNames', '[]string', '0-5'),
    field('timeoutMs', 'int32', '0+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '1+'),
    array('responses', '0+', [
      field('name', 'string', '0+', { nullable: '6+' }),
      field('topicId', 'uuid', '6+'),
      field('errorCode', 'int16', '0+'),
      field('errorMessage', 'string', '5+', { nullable: '5+', default: null }),
    ]),
  ],
});
