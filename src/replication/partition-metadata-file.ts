/**
 * `partition.metadata` in a partition directory (Kafka's
 * PartitionMetadataFile): the topic id the log belongs to, so a log left
 * behind by a deleted topic is never adopted by a new topic of the same name.
 *
 * Format (text, as Kafka writes it):
 *
 *   version: 0
 *   topic_id: <base64url topic id>
 *
 * Crash policy: written atomically (temporary file, sync, rename) when a
 * partition is first hosted; a missing or unreadable file means "unknown"
 * and the log is trusted as belonging to the topic of its name.
 */
import { posix } from 'node:path';
import type { FileSystem } from '../io/fs.js';

export const PARTITION_METADATA_FILE = 'partition.metadata';

export async function writePartitionMetadata(fs: FileSystem, dir: string, topicId: string): Promise<void> {
  await fs.writeFileAtomic(posix.join(dir, PARTITION_METADATA_FILE), Buffer.from(`version: 0\ntopic_id: ${topicId}\n`));
}

/** The topic id recorded in `dir`, or null when there is no readable file. */
export async function readPartitionMetadata(fs: FileSystem, dir: string): Promise<string | null> {
  const path = posix.join(dir, PARTITION_METADATA_FILE);
  if ((await fs.stat(path)) === null) return null;
  const text = (await fs.readFile(path)).toString('utf8');
  const version = /^version:\s*(\d+)\s*$/m.exec(text)?.[1];
  const topicId = /^topic_id:\s*(\S+)\s*$/m.exec(text)?.[1];
  return version === '0' && topicId !== undefined ? topicId : null;
}
