/**
 * LeaderEpochFileCache: for each leader epoch, the first offset written in
 * it, backed by the partition's `leader-epoch-checkpoint` file. It answers
 * OffsetForLeaderEpoch (where did epoch E end?) so a follower can truncate a
 * divergent tail (KIP-101, KIP-279).
 *
 * File format: a checkpoint file (see checkpoint-file.ts), version 0, with
 * `<epoch> <startOffset>` lines in increasing epoch and offset order.
 *
 * Crash policy: every change is written through (temporary file, fsync,
 * rename, directory fsync); changes are rare (leader elections, truncation,
 * log-start moves). A file that does not parse or is out of order is
 * dropped with a warning, and recovery re-derives epochs from the
 * partitionLeaderEpoch of the batches it scans, as Kafka does. After load the
 * owner truncates the cache to [logStartOffset, logEndOffset).
 */
import { posix } from 'node:path';
import type { FileSystem } from '../io/fs.js';
import {
  CorruptCheckpointError,
  leaderEpochCheckpointFormat,
  readCheckpointFile,
  writeCheckpointFile,
  type EpochEntry,
} from './checkpoint-file.js';
import { LEADER_EPOCH_CHECKPOINT_FILE } from './file-names.js';
import type { StorageLogger } from './log-config.js';

/** Kafka's UNDEFINED_EPOCH and UNDEFINED_EPOCH_OFFSET. */
export const UNDEFINED_EPOCH = -1;
export const UNDEFINED_EPOCH_OFFSET = -1;

export interface EpochEndOffset {
  leaderEpoch: number;
  endOffset: number;
}

export class LeaderEpochFileCache {
  private entries: EpochEntry[];
  private writing: Promise<void> = Promise.resolve();

  private constructor(
    private readonly fs: FileSystem,
    private path: string,
    entries: EpochEntry[],
  ) {
    this.entries = entries;
  }

  static async load(fs: FileSystem, dir: string, logger: StorageLogger): Promise<LeaderEpochFileCache> {
    const path = posix.join(dir, LEADER_EPOCH_CHECKPOINT_FILE);
    let entries: EpochEntry[] = [];
    try {
      entries = (await readCheckpointFile(fs, path, leaderEpochCheckpointFormat)) ?? [];
    } catch (error) {
      if (!(error instanceof CorruptCheckpointError)) throw error;
      logger.warn(`${error.message}; rebuilding the leader epoch cache from the log`);
    }
    if (!isIncreasing(entries)) {
      logger.warn(`${path}: entries out of order; rebuilding the leader epoch cache from the log`);
      entries = [];
    }
    return new LeaderEpochFileCache(fs, path, entries);
  }

  get epochEntries(): readonly EpochEntry[] {
    return this.entries;
  }

  get latestEntry(): EpochEntry | null {
    return this.entries.at(-1) ?? null;
  }

  get latestEpoch(): number | null {
    return this.latestEntry?.epoch ?? null;
  }

  /** Leader epoch of the batch holding `offset`: the last entry starting at or before it. */
  epochForOffset(offset: number): number | null {
    let found: number | null = null;
    for (const entry of this.entries) {
      if (entry.startOffset > offset) break;
      found = entry.epoch;
    }
    return found;
  }

  /**
   * Records that `epoch` starts at `startOffset`. Entries with an epoch >=
   * `epoch` or a start >= `startOffset` conflict and are removed first.
   * Returns true when the cache changed (the file is then rewritten).
   */
  assign(epoch: number, startOffset: number): boolean {
    const latest = this.latestEntry;
    if (latest !== null && latest.epoch === epoch && startOffset >= latest.startOffset) return false;
    this.entries = this.entries.filter((entry) => entry.epoch < epoch && entry.startOffset < startOffset);
    this.entries.push({ epoch, startOffset });
    return true;
  }

  /** Removes entries starting at or after `endOffset` (truncation of the log's end). */
  truncateFromEnd(endOffset: number): boolean {
    const kept = this.entries.filter((entry) => entry.startOffset < endOffset);
    if (kept.length === this.entries.length) return false;
    this.entries = kept;
    return true;
  }

  /**
   * Drops entries wholly before `startOffset`; the entry covering it is kept
   * with its start moved up to `startOffset` (the log start moved).
   */
  truncateFromStart(startOffset: number): boolean {
    const removed = this.entries.filter((entry) => entry.startOffset <= startOffset);
    const last = removed.at(-1);
    if (last === undefined || (removed.length === 1 && last.startOffset === startOffset)) return false;
    this.entries = [{ epoch: last.epoch, startOffset }, ...this.entries.slice(removed.length)];
    return true;
  }

  clear(): boolean {
    if (this.entries.length === 0) return false;
    this.entries = [];
    return true;
  }

  /**
   * OffsetForLeaderEpoch: the largest epoch <= `requestedEpoch` this log
   * knows, and the offset where it ended (the next epoch's start, or the log
   * end offset for the latest epoch). Unknown epochs give (-1, -1).
   */
  endOffsetFor(requestedEpoch: number, logEndOffset: number): EpochEndOffset {
    const undefinedResult = { leaderEpoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_EPOCH_OFFSET };
    if (requestedEpoch === UNDEFINED_EPOCH) return undefinedResult;
    if (this.latestEpoch === requestedEpoch) return { leaderEpoch: requestedEpoch, endOffset: logEndOffset };
    const higher = this.entries.findIndex((entry) => entry.epoch > requestedEpoch);
    if (higher < 0) return undefinedResult;
    const higherStart = this.entries[higher]!.startOffset;
    const floor = higher === 0 ? null : this.entries[higher - 1]!;
    return { leaderEpoch: floor === null ? requestedEpoch : floor.epoch, endOffset: higherStart };
  }

  /** Writes the current entries to the checkpoint file (serialised with earlier writes). */
  flush(): Promise<void> {
    const snapshot = [...this.entries];
    const write = this.writing.then(() => writeCheckpointFile(this.fs, this.path, snapshot, leaderEpochCheckpointFormat));
    this.writing = write.catch(() => {});
    return write;
  }

  /** Follows a rename of the partition directory. */
  moveTo(dir: string): void {
    this.path = posix.join(dir, LEADER_EPOCH_CHECKPOINT_FILE);
  }
}

function isIncreasing(entries: readonly EpochEntry[]): boolean {
  for (let i = 1; i < entries.length; i++) {
    if (entries[i]!.epoch <= entries[i - 1]!.epoch || entries[i]!.startOffset < entries[i - 1]!.startOffset) return false;
  }
  return true;
}
