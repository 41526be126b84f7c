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

/** `[{topic, partitions}]`, topics in first-seen order. */
export function groupByTopic(tps: readonly TopicPartition[]): { topic: string; partitions: number[] }[] {
  const out = new Map<string, number[]>();
  for (const tp of tps) out.set(tp.topic, [...(out.get(tp.topic) ?? []), tp.partition]);
  return [...out].map(([topic, partitions]) => ({ topic, partitions }));
}

/** The TopicPartition a topicPartitionKey was made from. */
export function parseTopicPartitionKey(key: string): TopicPartition {
  const dash = key.lastIndexOf('-');
  return { topic: key.slice(0, dash), partition: Number(key.slice(dash + 1)) };
}
