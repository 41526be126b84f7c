/**
 * KafkaRaftClient for `__cluster_metadata`: elections through the role state
 * machine (quorum-state.ts), appends as leader, the high watermark, and the
 * delivery of committed batches and snapshots to listeners (the controller
 * and the broker's metadata loader), in log order, one at a time.
 *
 * Guarantees to listeners (Kafka's RaftClient.Listener contract):
 * - handleLoadSnapshot comes first when a snapshot exists, then
 *   handleCommit for every batch from the snapshot end (or the log start)
 *   up to the high watermark, never an uncommitted one;
 * - handleLeaderChange tells a listener that this node leads only after the
 *   listener has seen every batch before the leader's epoch start offset, so
 *   an active controller acts on complete state.
 *
 * append() resolves after the batch is flushed, committed, and delivered to
 * every listener. A listener must not await append() from inside a
 * callback: delivery runs on the same queue as appends.
 *
 * Only a single-voter quorum is driven here (it elects itself on start);
 * Vote, BeginQuorumEpoch and Fetch for more voters drive the same state
 * machine in a later step.
 */
import type { Clock } from '../io/clock.js';
import type { FileSystem } from '../io/fs.js';
import { readControlRecord } from '../protocol/records/control.js';
import { buildBatch, decodeRecords } from '../protocol/records/records.js';
import type { StorageLogger } from '../storage/log-config.js';
import { buildRaftControlBatch, decodeControlValue, isRaftControlType, type RaftControlRecord } from './control-records.js';
import { QuorumState, type RaftEffect } from './quorum-state.js';
import { readQuorumState, writeQuorumState } from './quorum-state-file.js';
import { RAFT_BATCH_BYTES_MAX, type RaftLog, type StoredBatch } from './raft-log.js';
import { readSnapshot, writeSnapshot, type OffsetAndEpoch, type RecordSerde, type SnapshotContent } from './snapshot.js';

export interface LeaderAndEpoch {
  /** Null while no leader is known. */
  leaderId: number | null;
  epoch: number;
}

export interface Batch<T> {
  baseOffset: number;
  lastOffset: number;
  /** The leader epoch the batch was appended in. */
  epoch: number;
  appendTimestamp: number;
  sizeInBytes: number;
  records: T[];
  /** Raft's own records (LeaderChangeMessage, ...) when this is a control batch. */
  control: RaftControlRecord[];
}

export interface RaftListener<T> {
  handleLoadSnapshot(snapshot: SnapshotContent<T>): Promise<void> | void;
  handleCommit(batch: Batch<T>): Promise<void> | void;
  handleLeaderChange(leader: LeaderAndEpoch): Promise<void> | void;
}

export interface RaftClientOptions<T> {
  nodeId: number;
  voters: readonly number[];
  /** directory.id of the metadata log directory. */
  directoryId: string;
  log: RaftLog;
  serde: RecordSerde<T>;
  env: { fs: FileSystem; clock: Clock };
  logger?: StorageLogger;
}

export class NotLeaderError extends Error {
  override readonly name = 'NotLeaderError';
}

export class RaftBatchTooLargeError extends Error {
  override readonly name = 'RaftBatchTooLargeError';
}

interface RegisteredListener<T> {
  listener: RaftListener<T>;
  /** The leader this listener has been told about. */
  notified: LeaderAndEpoch | null;
}

export class KafkaRaftClient<T> {
  private readonly quorum: QuorumState;
  private readonly listeners: RegisteredListener<T>[] = [];
  private readonly log: RaftLog;
  /** Next offset to deliver to listeners (all listeners move together). */
  private nextDeliveryOffset = 0;
  private queue: Promise<unknown> = Promise.resolve();
  private failure: Error | null = null;
  private started = false;
  private closed = false;

  constructor(private readonly options: RaftClientOptions<T>) {
    this.log = options.log;
    this.quorum = new QuorumState(options.nodeId, options.voters, options.directoryId);
  }

  register(listener: RaftListener<T>): void {
    if (this.started) throw new Error('listeners must register before the raft client starts');
    this.listeners.push({ listener, notified: null });
  }

  get leaderAndEpoch(): LeaderAndEpoch {
    return { leaderId: this.quorum.leaderId, epoch: this.quorum.epoch };
  }

  get isLeader(): boolean {
    return this.quorum.isLeader;
  }

  get highWatermark(): number | null {
    return this.quorum.highWatermark;
  }

  /** The offset the next appended record gets. */
  get logEndOffset(): number {
    return this.log.logEndOffset;
  }

  get latestSnapshotId(): OffsetAndEpoch | null {
    return this.log.latestSnapshotId;
  }

  /** Epoch of the record at `offset`, for naming a snapshot that ends after it. */
  epochForOffset(offset: number): number | null {
    return this.log.epochForOffset(offset);
  }

  /**
   * Restores the election state, delivers the latest snapshot, and (as the
   * only voter) elects this node: a new epoch, a LeaderChangeMessage, and
   * the high watermark at the log end once that is flushed, which delivers
   * every committed batch.
   */
  async start(): Promise<void> {
    if (this.started) throw new Error('raft client already started');
    this.started = true;
    const persisted = await readQuorumState(this.options.env.fs, this.log.dir);
    await this.run(this.quorum.initialize(persisted, this.log.lastEpoch));
    await this.loadLatestSnapshot();
    if (!(this.options.voters.length === 1 && this.options.voters[0] === this.options.nodeId)) {
      throw new Error(`quorum voters [${this.options.voters.join(',')}]: only a single-voter quorum of this node (${this.options.nodeId}) is supported yet`);
    }
    await this.serialized(async () => {
      await this.run(this.quorum.transitionToCandidate());
      if (!this.quorum.isVoteGranted()) throw new Error('a single voter must win its own election');
      await this.run(this.quorum.transitionToLeader(this.log.logEndOffset));
    });
  }

  /**
   * Appends `records` as one batch in the current epoch. Resolves with its
   * offsets once it is flushed, committed and delivered to every listener.
   */
  append(records: readonly T[]): Promise<{ baseOffset: number; lastOffset: number; epoch: number }> {
    if (records.length === 0) throw new Error('append needs at least one record');
    return this.serialized(async () => {
      if (!this.quorum.isLeader) throw new NotLeaderError(`node ${this.options.nodeId} is not the leader (epoch ${this.quorum.epoch})`);
      const epoch = this.quorum.epoch;
      const timestampMs = this.options.env.clock.nowMs();
      const batch = buildBatch({
        records: records.map((record) => ({ key: null, value: this.options.serde.encode(record), timestamp: timestampMs })),
        baseOffset: this.log.logEndOffset,
        partitionLeaderEpoch: epoch,
      });
      if (batch.length > RAFT_BATCH_BYTES_MAX) throw new RaftBatchTooLargeError(`a batch of ${records.length} records is ${batch.length} bytes, above ${RAFT_BATCH_BYTES_MAX}`);
      const appended = await this.appendAndCommit(batch, epoch);
      return { baseOffset: appended.firstOffset, lastOffset: appended.lastOffset, epoch };
    });
  }

  /** Writes a snapshot of the state after every record below `id.offset` (which must be committed). */
  async createSnapshot(id: OffsetAndEpoch, records: readonly T[], lastContainedLogTimestamp: number): Promise<void> {
    const highWatermark = this.quorum.highWatermark ?? 0;
    if (id.offset > highWatermark) throw new Error(`snapshot at ${id.offset} is past the high watermark ${highWatermark}`);
    const timestampMs = this.options.env.clock.nowMs();
    await writeSnapshot(this.options.env.fs, this.log.dir, { id, lastContainedLogTimestamp, records: [...records] }, { serde: this.options.serde, timestampMs });
    await this.serialized(() => this.log.snapshotWritten(id));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue.catch(() => undefined);
    await this.log.close();
  }

  // ---- internals

  /** Runs `operation` after every earlier append and delivery; a failure poisons the client. */
  private serialized<R>(operation: () => Promise<R>): Promise<R> {
    const run = this.queue.then(async () => {
      if (this.failure !== null) throw this.failure;
      if (this.closed) throw new Error('raft client is closed');
      try {
        return await operation();
      } catch (error) {
        if (!(error instanceof NotLeaderError) && !(error instanceof RaftBatchTooLargeError)) this.failure = error as Error;
        throw error;
      }
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async appendAndCommit(batch: Buffer, epoch: number): Promise<{ firstOffset: number; lastOffset: number }> {
    const appended = await this.log.appendAsLeader(batch, epoch);
    await this.log.flush();
    await this.run(this.quorum.updateVoterEndOffset(this.options.nodeId, this.log.logEndOffset));
    return appended;
  }

  private async run(effects: readonly RaftEffect[]): Promise<void> {
    for (const effect of effects) await this.apply(effect);
  }

  private async apply(effect: RaftEffect): Promise<void> {
    switch (effect.type) {
      case 'persist':
        await writeQuorumState(this.options.env.fs, this.log.dir, effect.election, 0);
        return;
      case 'appendLeaderChange': {
        const message: RaftControlRecord = {
          type: 'LEADER_CHANGE',
          data: {
            version: 0,
            leaderId: effect.leaderId,
            voters: effect.voters.map((voterId) => ({ voterId, voterDirectoryId: '' })),
            grantingVoters: effect.grantingVoters.map((voterId) => ({ voterId, voterDirectoryId: '' })),
          },
        };
        const batch = buildRaftControlBatch([message], { baseOffset: this.log.logEndOffset, epoch: effect.epoch, timestampMs: this.options.env.clock.nowMs() });
        await this.appendAndCommit(batch, effect.epoch);
        return;
      }
      case 'sendVoteRequests':
        throw new Error('Vote requests to other voters are not implemented yet');
      case 'leaderChanged':
        await this.maybeFireLeaderChange();
        return;
      case 'highWatermark':
        this.log.updateHighWatermark(effect.offset);
        await this.deliverCommitted(effect.offset);
        await this.maybeFireLeaderChange();
        return;
    }
  }

  private async loadLatestSnapshot(): Promise<void> {
    const id = this.log.latestSnapshotId;
    if (id === null) {
      this.nextDeliveryOffset = this.log.logStartOffset;
      return;
    }
    const snapshot = await readSnapshot(this.options.env.fs, this.log.dir, id, this.options.serde);
    for (const { listener } of this.listeners) await listener.handleLoadSnapshot(snapshot);
    this.nextDeliveryOffset = id.offset;
  }

  private async deliverCommitted(highWatermark: number): Promise<void> {
    if (this.nextDeliveryOffset >= highWatermark) return;
    for await (const stored of this.log.readBatches(this.nextDeliveryOffset, highWatermark)) {
      const batch = this.decodeBatch(stored);
      for (const { listener } of this.listeners) await listener.handleCommit(batch);
      this.nextDeliveryOffset = batch.lastOffset + 1;
    }
  }

  private decodeBatch(stored: StoredBatch): Batch<T> {
    const decoded = decodeRecords(stored.bytes);
    if (decoded.error !== null) throw new Error(`${this.log.dir}: batch at ${stored.header.baseOffset}: ${decoded.error.message}`);
    const batch: Batch<T> = {
      baseOffset: stored.header.baseOffset,
      lastOffset: stored.header.lastOffset,
      epoch: stored.header.partitionLeaderEpoch,
      appendTimestamp: stored.header.maxTimestamp,
      sizeInBytes: stored.header.sizeBytes,
      records: [],
      control: [],
    };
    for (const record of decoded.records) {
      if (!stored.header.isControl) {
        batch.records.push(this.options.serde.decode(record.value ?? Buffer.alloc(0)));
        continue;
      }
      const control = readControlRecord(record);
      if ('code' in control) throw new Error(`${this.log.dir}: control record at ${record.offset}: ${control.message}`);
      if (isRaftControlType(control.type)) batch.control.push(decodeControlValue(control.type, record.value ?? Buffer.alloc(0)));
    }
    return batch;
  }

  /** Tells listeners about the current leader; this node's leadership only once they reached its epoch start. */
  private async maybeFireLeaderChange(): Promise<void> {
    const current = this.leaderAndEpoch;
    const state = this.quorum.state;
    if (state.role === 'leader' && this.nextDeliveryOffset <= state.epochStartOffset) return;
    for (const registered of this.listeners) {
      const told = registered.notified;
      if (told !== null && told.epoch === current.epoch && told.leaderId === current.leaderId) continue;
      registered.notified = current;
      await registered.listener.handleLeaderChange(current);
    }
  }
}
