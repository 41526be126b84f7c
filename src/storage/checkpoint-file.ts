/**
 * Kafka's checkpoint files: small text files replaced atomically.
 *
 * Format (Kafka's CheckpointFile, byte-compatible), lines ending in '\n':
 *   <version>          0
 *   <count>            number of entry lines
 *   <entry>            count lines, fields separated by one space
 * Offset checkpoints (recovery-point-offset-checkpoint,
 * log-start-offset-checkpoint, replication-offset-checkpoint) have entries
 * `<topic> <partition> <offset>`; the per-partition leader-epoch-checkpoint
 * has `<epoch> <startOffset>`.
 *
 * Crash policy: a write goes to `<file>.tmp`, is fsynced, renamed over the
 * file and the directory is fsynced, so a reader sees the old or the new
 * file whole. A file that does not parse is reported as CorruptCheckpointError;
 * owners treat it as absent (more recovery work, never wrong data).
 */
import { posix } from 'node:path';
import type { FileSystem } from '../io/fs.js';
import type { TopicPartition } from './file-names.js';

export const CHECKPOINT_VERSION = 0;

export class CorruptCheckpointError extends Error {
  override readonly name = 'CorruptCheckpointError';
}

export interface CheckpointFormat<T> {
  /** Fields per entry line. */
  readonly fieldCount: number;
  format(entry: T): string;
  /** null when the fields do not form a valid entry. */
  parse(fields: readonly string[]): T | null;
}

export async function writeCheckpointFile<T>(
  fs: FileSystem,
  path: string,
  entries: readonly T[],
  format: CheckpointFormat<T>,
): Promise<void> {
  const lines = [String(CHECKPOINT_VERSION), String(entries.length), ...entries.map((entry) => format.format(entry))];
  await fs.writeFileAtomic(path, Buffer.from(lines.join('\n') + '\n', 'utf8'));
  await fs.syncDir(posix.dirname(path));
}

/** The entries of a checkpoint file, or null when it does not exist. Throws CorruptCheckpointError. */
export async function readCheckpointFile<T>(fs: FileSystem, path: string, format: CheckpointFormat<T>): Promise<T[] | null> {
  if ((await fs.stat(path)) === null) return null;
  return parseCheckpoint((await fs.readFile(path)).toString('utf8'), path, format);
}

export function parseCheckpoint<T>(text: string, path: string, format: CheckpointFormat<T>): T[] {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const version = parseNonNegativeInt(lines[0]);
  if (version !== CHECKPOINT_VERSION) throw new CorruptCheckpointError(`${path}: unrecognised version line '${lines[0]}'`);
  const count = parseNonNegativeInt(lines[1]);
  if (count === null) throw new CorruptCheckpointError(`${path}: malformed count line '${lines[1]}'`);
  if (lines.length - 2 !== count) {
    throw new CorruptCheckpointError(`${path}: expected ${count} entries, found ${lines.length - 2}`);
  }
  return lines.slice(2).map((line) => {
    const fields = line.trim().split(/\s+/);
    const entry = fields.length === format.fieldCount ? format.parse(fields) : null;
    if (entry === null) throw new CorruptCheckpointError(`${path}: malformed line '${line}'`);
    return entry;
  });
}

function parseNonNegativeInt(text: string | undefined): number | null {
  if (text === undefined || !/^\d+$/.test(text.trim())) return null;
  const value = Number(text.trim());
  return Number.isSafeInteger(value) ? value : null;
}

function parseInteger(text: string): number | null {
  if (!/^-?\d+$/.test(text)) return null;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : null;
}

export interface TopicPartitionOffset extends TopicPartition {
  offset: number;
}

export const offsetCheckpointFormat: CheckpointFormat<TopicPartitionOffset> = {
  fieldCount: 3,
  format: (entry) => `${entry.topic} ${entry.partition} ${entry.offset}`,
  parse([topic, partition, offset]) {
    const partitionValue = parseInteger(partition!);
    const offsetValue = parseInteger(offset!);
    if (partitionValue === null || partitionValue < 0 || offsetValue === null) return null;
    return { topic: topic!, partition: partitionValue, offset: offsetValue };
  },
};

export interface EpochEntry {
  epoch: number;
  startOffset: number;
}

export const leaderEpochCheckpointFormat: CheckpointFormat<EpochEntry> = {
  fieldCount: 2,
  format: (entry) => `${entry.epoch} ${entry.startOffset}`,
  parse([epoch, startOffset]) {
    const epochValue = parseInteger(epoch!);
    const offsetValue = parseInteger(startOffset!);
    if (epochValue === null || epochValue < 0 || offsetValue === null || offsetValue < 0) return null;
    return { epoch: epochValue, startOffset: offsetValue };
  },
};
