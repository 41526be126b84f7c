/**
 * The Raft log of `__cluster_metadata` (Kafka's KafkaMetadataLog): the
 * partition directory `<metadata.log.dir>/__cluster_metadata-0` holding
 * ordinary log segments (Spool's storage Log: `.log`, `.index`,
 * `.timeindex`, `leader-epoch-checkpoint`), the `quorum-state` file and
 * `<offset>-<epoch>.checkpoint` snapshots.
 *
 * Batches carry the Raft epoch as their partitionLeaderEpoch. The leader
 * appends whole batches (the log assigns offsets); Raft flushes before it
 * counts an entry towards the high watermark, so committed metadata is on
 * disk. Crash policy: the log is always recovered from its start on open
 * (it is small; Kafka does the same for the metadata log), so a torn tail
 * is cut before anything is replayed.
 *
 * Retention: once a snapshot exists and the log is larger than
 * metadata.max.retention.bytes, the log start moves up to the latest
 * snapshot, whole segments below it go, and older snapshots are deleted.
 */
import { posix } from 'node:path';
import type { Clock, Timers } from '../io/clock.js';
import type { FileSystem } from '../io/fs.js';
import { iterateBatches, type BatchHeader } from '../protocol/records/batch.js';
import { CLUSTER_METADATA_TOPIC_NAME } from '../storage/file-names.js';
import { loadLog } from '../storage/log-loader.js';
import type { Log } from '../storage/log.js';
import { logConfig, type StorageLogger } from '../storage/log-config.js';
import { compareSnapshotIds, deleteSnapshot, listSnapshots, type OffsetAndEpoch } from './snapshot.js';

export const METADATA_PARTITION_DIR = `${CLUSTER_METADATA_TOPIC_NAME}-0`;
/** Kafka's KafkaRaftClient.MAX_BATCH_SIZE_BYTES. */
export const RAFT_BATCH_BYTES_MAX = 8 * 1024 * 1024;
const READ_BYTES = 1024 * 1024;

export interface RaftLogOptions {
  /** The metadata log directory (metadata.log.dir, else the first log dir). */
  logDir: string;
  segmentBytes: number;
  segmentMs: number;
  retentionBytes: number;
  logger?: StorageLogger;
  /** Called when an I/O error takes the metadata log offline (the broker then stops, as Kafka halts). */
  onIoError?: (error: NodeJS.ErrnoException) => void;
}

export interface RaftLogEnv {
  fs: FileSystem;
  clock: Clock;
  timers: Timers;
}

export interface StoredBatch {
  header: BatchHeader;
  /** The whole batch. */
  bytes: Buffer;
}

export class RaftLog {
  private snapshotIds: OffsetAndEpoch[];

  private constructor(
    private readonly env: RaftLogEnv,
    readonly dir: string,
    private readonly log: Log,
    snapshots: OffsetAndEpoch[],
    private readonly retentionBytes: number,
  ) {
    this.snapshotIds = snapshots;
  }

  static async open(env: RaftLogEnv, options: RaftLogOptions): Promise<RaftLog> {
    const dir = posix.join(options.logDir, METADATA_PARTITION_DIR);
    const config = logConfig({
      segmentBytes: options.segmentBytes,
      segmentMs: options.segmentMs,
      retentionMs: -1,
      retentionBytes: -1,
      maxMessageBytes: RAFT_BATCH_BYTES_MAX,
      fileDeleteDelayMs: 60_000,
    });
    const log = await loadLog(env, {
      dir,
      topicPartition: { topic: CLUSTER_METADATA_TOPIC_NAME, partition: 0 },
      config,
      hadCleanShutdown: false,
      ...(options.logger === undefined ? {} : { logger: options.logger }),
      ...(options.onIoError === undefined ? {} : { onIoError: options.onIoError }),
    });
    const snapshots = await listSnapshots(env.fs, dir);
    const raftLog = new RaftLog(env, dir, log, snapshots, options.retentionBytes);
    const latest = raftLog.latestSnapshotId;
    // A snapshot past the log end (the log was cut below it) restarts the log at the snapshot.
    if (latest !== null && latest.offset > log.logEndOffset) await log.truncateFullyAndStartAt(latest.offset);
    return raftLog;
  }

  get logEndOffset(): number {
    return this.log.logEndOffset;
  }

  get logStartOffset(): number {
    return this.log.logStartOffset;
  }

  get sizeBytes(): number {
    return this.log.sizeBytes;
  }

  /** Epoch of the last batch in the log, else of the latest snapshot, else 0. */
  get lastEpoch(): number {
    return this.log.leaderEpochCache.latestEpoch ?? this.latestSnapshotId?.epoch ?? 0;
  }

  /** The leader epoch of the record at `offset` (from the leader-epoch-checkpoint), or null. */
  epochForOffset(offset: number): number | null {
    const snapshot = this.latestSnapshotId;
    if (snapshot !== null && offset === snapshot.offset - 1) return snapshot.epoch;
    return this.log.leaderEpochCache.epochForOffset(offset);
  }

  get latestSnapshotId(): OffsetAndEpoch | null {
    return this.snapshotIds[this.snapshotIds.length - 1] ?? null;
  }

  /** Every snapshot id kept, oldest first. */
  get snapshots(): readonly OffsetAndEpoch[] {
    return this.snapshotIds;
  }

  /**
   * Where `epoch` ends in this log (Kafka's KafkaMetadataLog.endOffsetForEpoch):
   * the largest epoch at most `epoch` with the offset it ended at; the
   * earliest snapshot's id when the epoch ends exactly there (the epoch
   * cache below it is gone); the log end and last epoch for an unknown epoch.
   */
  endOffsetForEpoch(epoch: number): OffsetAndEpoch {
    const found = this.log.endOffsetForEpoch(epoch);
    if (found.leaderEpoch < 0) return { offset: this.logEndOffset, epoch: this.lastEpoch };
    const earliest = this.snapshotIds[0];
    if (earliest !== undefined && found.endOffset === earliest.offset && found.leaderEpoch === epoch) return earliest;
    return { offset: found.endOffset, epoch: found.leaderEpoch };
  }

  /**
   * Checks a follower's fetch position against this (leader's) log, as
   * Kafka's ReplicatedLog.validateOffsetAndEpoch: below the earliest
   * snapshot it must load the latest snapshot; past where its last epoch
   * ends here it diverged and must truncate; otherwise it may read on.
   */
  validateOffsetAndEpoch(offset: number, epoch: number): { kind: 'valid' } | { kind: 'snapshot'; id: OffsetAndEpoch } | { kind: 'diverging'; end: OffsetAndEpoch } {
    const earliest = this.snapshotIds[0];
    const latest = this.latestSnapshotId;
    if (earliest !== undefined && latest !== null) {
      if (offset < this.logStartOffset || (offset === this.logStartOffset && epoch !== earliest.epoch) || epoch < earliest.epoch) return { kind: 'snapshot', id: latest };
    }
    const end = this.endOffsetForEpoch(epoch);
    if (end.epoch !== epoch || end.offset < offset) return { kind: 'diverging', end };
    return { kind: 'valid' };
  }

  /** Whole batches from `fromOffset` to the log end, at most `maxBytes` (at least one batch). */
  async read(fromOffset: number, maxBytes: number): Promise<Buffer> {
    const read = await this.log.read(fromOffset, { maxBytes, minOneMessage: true });
    return wholeBatches(read.records);
  }

  /** Appends batches copied from the leader; they keep their offsets and epochs. */
  async appendAsFollower(batches: Buffer): Promise<void> {
    await this.log.append(batches, { leaderEpoch: -1, assignOffsets: false, origin: 'replication' });
  }

  /**
   * Truncates after a divergence (Kafka's ReplicatedLog.truncateToEndOffset):
   * to the leader's end of the epoch, or this log's own end of it when that
   * comes first; when this log ends the epoch at another one (it never had
   * the leader's epoch: the bootstrap snapshot, or an epoch it led alone),
   * to where this log says that epoch ends. Epoch 0 (nothing but the
   * bootstrap snapshot) is cut at the leader's offset. Committed entries are
   * never truncated.
   */
  async truncateToEndOffset(end: OffsetAndEpoch): Promise<number> {
    if (end.offset < this.log.highWatermark) throw new Error(`${this.dir}: truncation to ${end.offset} is below the high watermark ${this.log.highWatermark}`);
    const offset = this.truncationOffset(end);
    await this.log.truncateTo(offset);
    return offset;
  }

  private truncationOffset(end: OffsetAndEpoch): number {
    if (end.epoch === 0) return Math.min(end.offset, this.logEndOffset);
    const local = this.endOffsetForEpoch(end.epoch);
    return local.epoch === end.epoch ? Math.min(local.offset, end.offset) : local.offset;
  }

  /** A snapshot copied from the leader replaces the log: the log restarts at its end offset. */
  async installSnapshot(id: OffsetAndEpoch): Promise<void> {
    await this.log.truncateFullyAndStartAt(id.offset);
    this.log.updateHighWatermark(id.offset);
    await this.snapshotWritten(id);
  }

  /** Appends whole batches as leader of `epoch`; the log assigns their offsets. */
  async appendAsLeader(batch: Buffer, epoch: number): Promise<{ firstOffset: number; lastOffset: number }> {
    const info = await this.log.append(batch, { leaderEpoch: epoch, assignOffsets: true, origin: 'raftLeader' });
    return { firstOffset: info.firstOffset, lastOffset: info.lastOffset };
  }

  async flush(): Promise<void> {
    await this.log.flush();
  }

  updateHighWatermark(offset: number): void {
    this.log.updateHighWatermark(offset);
  }

  /** Whole batches holding offsets in [fromOffset, toOffset), in order. */
  async *readBatches(fromOffset: number, toOffset: number): AsyncGenerator<StoredBatch> {
    let next = fromOffset;
    while (next < toOffset) {
      const read = await this.log.read(next, { maxBytes: READ_BYTES, maxOffset: toOffset, minOneMessage: true });
      if (read.records.length === 0) return;
      let progressed = false;
      for (const { position, header } of iterateBatches(read.records)) {
        if (header.lastOffset < next) continue;
        yield { header, bytes: read.records.subarray(position, position + header.sizeBytes) };
        next = header.lastOffset + 1;
        progressed = true;
      }
      if (!progressed) throw new Error(`${this.dir}: no complete batch at offset ${next}`);
    }
  }

  /** Registers a snapshot just written and applies retention. */
  async snapshotWritten(id: OffsetAndEpoch): Promise<void> {
    this.snapshotIds = [...this.snapshotIds.filter((s) => compareSnapshotIds(s, id) !== 0), id].sort(compareSnapshotIds);
    await this.maybeClean();
  }

  private async maybeClean(): Promise<void> {
    const latest = this.latestSnapshotId;
    if (latest === null || this.retentionBytes < 0 || this.log.sizeBytes <= this.retentionBytes) return;
    if (latest.offset > this.log.logStartOffset) {
      this.log.updateHighWatermark(Math.max(latest.offset, this.log.highWatermark));
      await this.log.deleteRecordsBefore(latest.offset);
      await this.log.deleteOldSegments();
    }
    for (const old of this.snapshotIds.slice(0, -1)) await deleteSnapshot(this.env.fs, this.dir, old);
    this.snapshotIds = [latest];
  }

  get highWatermark(): number {
    return this.log.highWatermark;
  }

  /** Its log directory failed: nothing more is written (close then only drops the handles). */
  markOffline(cause: Error): void {
    this.log.markOffline(cause);
  }

  async close(): Promise<void> {
    await this.log.close();
  }
}

/** The complete batches at the start of `records` (a read may end inside one). */
function wholeBatches(records: Buffer): Buffer {
  let end = 0;
  for (const { position, header } of iterateBatches(records)) end = position + header.sizeBytes;
  return records.subarray(0, end);
}
