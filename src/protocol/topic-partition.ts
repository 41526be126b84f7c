/**
 * Kafka's TopicPartition, and the one key Spool indexes anything by
 * partition with: `topic-partition`, as Kafka's TopicPartition.toString
 * prints it. Unambiguous although topic names (and topic ids) may contain
 * '-': the partition is the digits after the last one.
 */

export interface TopicPartition {
  topic: string;
  partition: number;
}

export function topicPartitionKey(topicPartition: TopicPartition): string {
  return `${topicPartition.topic}-${topicPartition.partition}`;
}

/** The TopicPartition a topicPartitionKey was made from. */
export function parseTopicPartitionKey(key: string): TopicPartition {
  const dash = key.lastIndexOf('-');
  return { topic: key.slice(0, dash), partition: Number(key.slice(dash + 1)) };
}
