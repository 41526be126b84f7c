/**
 * Kafka's topic name rules (org.apache.kafka.common.internals.Topic): ASCII
 * alphanumerics, '.', '_' and '-'; at most 249 characters; not '.' or '..';
 * and no two topics whose names differ only in '.' versus '_' (they would
 * share metric names). Messages are Kafka's, for INVALID_TOPIC_EXCEPTION.
 */

import { CLUSTER_METADATA_TOPIC_NAME } from '../storage/file-names.js';

export { CLUSTER_METADATA_TOPIC_NAME };

export const TOPIC_NAME_LENGTH_MAX = 249;
const LEGAL_CHARS = /^[a-zA-Z0-9._-]+$/;

/** The reason a name is illegal, or null when it is legal. */
export function topicNameError(name: string): string | null {
  if (name.length === 0) return "Topic name is illegal, it can't be empty";
  if (name === '.' || name === '..') return 'Topic name cannot be "." or ".."';
  if (name.length > TOPIC_NAME_LENGTH_MAX) {
    return `Topic name is illegal, it can't be longer than ${TOPIC_NAME_LENGTH_MAX} characters, topic name: ${name}`;
  }
  if (!LEGAL_CHARS.test(name)) {
    return `Topic name "${name}" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'`;
  }
  return null;
}

/** The name with '.' replaced by '_': two topics with the same unified name collide. */
export function unifyTopicName(name: string): string {
  return name.replaceAll('.', '_');
}

export function hasCollisionChars(name: string): boolean {
  return name.includes('.') || name.includes('_');
}

/**
 * Why `name` may not be created although it is a legal name, or null. Only
 * the Raft log's topic: it is no partition log and must never become one
 * (Kafka's ControllerApis refuses it with INVALID_REQUEST and this message).
 */
export function reservedTopicNameError(name: string): string | null {
  return name === CLUSTER_METADATA_TOPIC_NAME ? `Creation of internal topic ${CLUSTER_METADATA_TOPIC_NAME} is prohibited.` : null;
}

/** Internal topics Kafka creates itself (not `__cluster_metadata`: Kafka's Topic.isInternal leaves it out). */
export const GROUP_METADATA_TOPIC_NAME = '__consumer_offsets';
export const TRANSACTION_STATE_TOPIC_NAME = '__transaction_state';
export const SHARE_GROUP_STATE_TOPIC_NAME = '__share_group_state';

export function isInternalTopic(name: string): boolean {
  return name === GROUP_METADATA_TOPIC_NAME || name === TRANSACTION_STATE_TOPIC_NAME || name === SHARE_GROUP_STATE_TOPIC_NAME;
}
