/**
 * Kafka's file and directory names inside a log directory:
 *
 *   <log.dir>/<topic>-<partition>/00000000000000000000.log        record batches
 *                                 00000000000000000000.index      offset index
 *                                 00000000000000000000.timeindex  time index
 *                                 00000000000000000000.txnindex   aborted transactions
 *                                 leader-epoch-checkpoint
 *   <log.dir>/recovery-point-offset-checkpoint, log-start-offset-checkpoint,
 *             replication-offset-checkpoint, .kafka_cleanshutdown
 *
 * A segment's files are named by its base offset, zero-padded to 20 digits.
 * Suffixes `.deleted` (awaiting file.delete.delay.ms), `.cleaned` and `.swap`
 * (compaction) mark files in transition.
 */
import { posix } from 'node:path';
import { type TopicPartition } from '../protocol/topic-partition.js';

export const LOG_FILE_SUFFIX = '.log';
export const INDEX_FILE_SUFFIX = '.index';
export const TIME_INDEX_FILE_SUFFIX = '.timeindex';
export const TXN_INDEX_FILE_SUFFIX = '.txnindex';
export const DELETED_FILE_SUFFIX = '.deleted';
export const CLEANED_FILE_SUFFIX = '.cleaned';
export const SWAP_FILE_SUFFIX = '.swap';

export const LEADER_EPOCH_CHECKPOINT_FILE = 'leader-epoch-checkpoint';
export const RECOVERY_POINT_CHECKPOINT_FILE = 'recovery-point-offset-checkpoint';
export const LOG_START_OFFSET_CHECKPOINT_FILE = 'log-start-offset-checkpoint';
export const REPLICATION_OFFSET_CHECKPOINT_FILE = 'replication-offset-checkpoint';
export const CLEAN_SHUTDOWN_FILE = '.kafka_cleanshutdown';
/**
 * The Raft log's topic (Kafka's Topic.CLUSTER_METADATA_TOPIC_NAME): its one
 * partition directory, `__cluster_metadata-0`, sits in a log directory next
 * to the partition logs but belongs to the quorum, never to a LogManager.
 */
export const CLUSTER_METADATA_TOPIC_NAME = '__cluster_metadata';
/** Suffix of a partition directory whose topic was deleted (Kafka: `<tp>.<uuid>-delete`). */
export const DELETE_DIR_SUFFIX = '-delete';

const OFFSET_DIGITS = 20;

/** `42` -> `00000000000000000042`. */
export function filenamePrefixFromOffset(offset: number): string {
  return String(offset).padStart(OFFSET_DIGITS, '0');
}

export function segmentFilePath(dir: string, baseOffset: number, suffix: string): string {
  return posix.join(dir, filenamePrefixFromOffset(baseOffset) + suffix);
}

/** The base offset a segment file name encodes, or null if the name is not a segment file name. */
export function offsetFromFileName(name: string): number | null {
  const match = /^(\d{20})\./.exec(name);
  if (match === null) return null;
  const offset = Number(match[1]);
  return Number.isSafeInteger(offset) ? offset : null;
}

export type { TopicPartition } from '../protocol/topic-partition.js';

export function partitionDirName(topicPartition: TopicPartition): string {
  return `${topicPartition.topic}-${topicPartition.partition}`;
}

/**
 * `my-topic-3` -> { topic: 'my-topic', partition: 3 }; null for other names,
 * including Kafka's transitional `<tp>.<uuid>-delete`, `-future` and `-stray`
 * directories.
 */
export function parseTopicPartitionName(name: string): TopicPartition | null {
  if (/\.[0-9a-f]+-(delete|future|stray)$/i.test(name)) return null;
  const dash = name.lastIndexOf('-');
  if (dash <= 0 || dash === name.length - 1) return null;
  const digits = name.slice(dash + 1);
  if (!/^\d+$/.test(digits)) return null;
  return { topic: name.slice(0, dash), partition: Number(digits) };
}
