/**
 * Spool's consumer with manual assignment: assign, seek, poll, position.
 * (Consumer groups arrive in a later issue.)
 *
 * Each assigned partition has a position: the offset of the next record
 * poll() returns. A partition without one (newly assigned, or after
 * seekToBeginning / seekToEnd or OFFSET_OUT_OF_RANGE) is reset through
 * ListOffsets per `auto.offset.reset` (earliest, latest, or none: an error).
 * poll() returns buffered records first; otherwise it sends a full Fetch
 * (no fetch session, KIP-227 sessions are optional) to every leader of a
 * fetchable partition, long-polling up to `fetch.max.wait.ms` within the
 * poll's timeout. Fetched batches are decoded with decodeRecords; control
 * batches are skipped, and under read_committed the batches of aborted
 * transactions are dropped using the response's aborted-transaction list.
 */
import { realEnv } from '../io/env.js';
import { ErrorCode } from '../protocol/errors.js';
import { iterateBatches, type BatchHeader } from '../protocol/records/batch.js';
import { readControlRecord } from '../protocol/records/control.js';
import { decodeRecords } from '../protocol/records/records.js';
import { ZERO_UUID } from '../protocol/reader.js';
import type { ResponseOf } from '../protocol/schema.js';
import { Fetch } from '../protocol/schemas/01-fetch.js';
import { Cluster, topicPartitionKey, type ClientOptions, type TopicPartition } from './cluster.js';
import { KafkaError, needsMetadataRefresh } from './errors.js';
import { IsolationLevel, listOffsets, OffsetSpec, type IsolationLevelName } from './list-offsets.js';

export interface ConsumerOptions extends ClientOptions {
  /** isolation.level. Default read_uncommitted. */
  isolationLevel?: IsolationLevelName;
  /** fetch.min.bytes. Default 1. */
  fetchMinBytes?: number;
  /** fetch.max.wait.ms. Default 500. */
  fetchMaxWaitMs?: number;
  /** fetch.max.bytes. Default 52428800. */
  fetchMaxBytes?: number;
  /** max.partition.fetch.bytes. Default 1048576. */
  maxPartitionFetchBytes?: number;
  /** max.poll.records. Default 500. */
  maxPollRecords?: number;
  /** auto.offset.reset. Default latest. */
  autoOffsetReset?: 'earliest' | 'latest' | 'none';
}

export interface ConsumerRecord {
  topic: string;
  partition: number;
  offset: number;
  timestamp: number;
  timestampType: 'CreateTime' | 'LogAppendTime';
  key: Buffer | null;
  value: Buffer | null;
  headers: { key: string; value: Buffer | null }[];
  leaderEpoch: number;
}

export const CONSUMER_DEFAULTS = {
  fetchMinBytes: 1,
  fetchMaxWaitMs: 500,
  fetchMaxBytes: 52_428_800,
  maxPartitionFetchBytes: 1_048_576,
  maxPollRecords: 500,
} as const;

interface PartitionState {
  topicPartition: TopicPartition;
  /** Next offset poll() returns; null until reset. */
  position: number | null;
  /** A reset to perform before fetching. */
  reset: 'earliest' | 'latest' | null;
  /** Records fetched but not yet returned. */
  buffered: ConsumerRecord[];
  /** The position after the buffered records (batches may end past the last record). */
  nextFetchOffset: number;
  highWatermark: number;
}

type FetchPartitionResponse = ResponseOf<typeof Fetch>['responses'][number]['partitions'][number];

export class Consumer {
  readonly cluster: Cluster;
  private readonly settings: Required<Omit<ConsumerOptions, keyof ClientOptions>>;
  private readonly partitions = new Map<string, PartitionState>();
  private closed = false;

  constructor(options: ConsumerOptions) {
    this.cluster = new Cluster({ ...options, env: options.env ?? realEnv });
    this.settings = {
      isolationLevel: options.isolationLevel ?? 'read_uncommitted',
      fetchMinBytes: options.fetchMinBytes ?? CONSUMER_DEFAULTS.fetchMinBytes,
      fetchMaxWaitMs: options.fetchMaxWaitMs ?? CONSUMER_DEFAULTS.fetchMaxWaitMs,
      fetchMaxBytes: options.fetchMaxBytes ?? CONSUMER_DEFAULTS.fetchMaxBytes,
      maxPartitionFetchBytes: options.maxPartitionFetchBytes ?? CONSUMER_DEFAULTS.maxPartitionFetchBytes,
      maxPollRecords: options.maxPollRecords ?? CONSUMER_DEFAULTS.maxPollRecords,
      autoOffsetReset: options.autoOffsetReset ?? 'latest',
    };
  }

  /** Replaces the assignment; partitions kept keep their positions. */
  assign(topicPartitions: readonly TopicPartition[]): void {
    const keep = new Map<string, PartitionState>();
    for (const tp of topicPartitions) {
      const key = topicPartitionKey(tp.topic, tp.partition);
      keep.set(key, this.partitions.get(key) ?? {
        topicPartition: { topic: tp.topic, partition: tp.partition },
        position: null,
        reset: null,
        buffered: [],
        nextFetchOffset: -1,
        highWatermark: -1,
      });
    }
    this.partitions.clear();
    for (const [key, state] of keep) this.partitions.set(key, state);
  }

  assignment(): TopicPartition[] {
    return [...this.partitions.values()].map((s) => ({ ...s.topicPartition }));
  }

  private state(tp: TopicPartition): PartitionState {
    const state = this.partitions.get(topicPartitionKey(tp.topic, tp.partition));
    if (state === undefined) throw new Error(`No current assignment for partition ${tp.topic}-${tp.partition}`);
    return state;
  }

  /** The next poll() starts at `offset`. */
  seek(tp: TopicPartition, offset: number): void {
    if (!Number.isSafeInteger(offset) || offset < 0) throw new Error(`seek offset must not be a negative number: ${offset}`);
    const state = this.state(tp);
    state.position = offset;
    state.reset = null;
    state.buffered = [];
    state.nextFetchOffset = offset;
  }

  seekToBeginning(tps: readonly TopicPartition[] = this.assignment()): void {
    for (const tp of tps) this.requestReset(this.state(tp), 'earliest');
  }

  seekToEnd(tps: readonly TopicPartition[] = this.assignment()): void {
    for (const tp of tps) this.requestReset(this.state(tp), 'latest');
  }

  private requestReset(state: PartitionState, reset: 'earliest' | 'latest'): void {
    state.position = null;
    state.reset = reset;
    state.buffered = [];
  }

  /** The offset of the next record poll() returns for `tp`, resetting it first if needed. */
  async position(tp: TopicPartition): Promise<number> {
    const state = this.state(tp);
    if (state.position === null) await this.resetPositions();
    return state.position!;
  }

  /** Up to max.poll.records records, waiting at most `timeoutMs` for some to arrive. */
  async poll(timeoutMs: number): Promise<ConsumerRecord[]> {
    if (this.closed) throw new Error('This consumer has already been closed.');
    const clock = this.cluster.env.clock;
    const deadlineMs = clock.monotonicMs() + timeoutMs;
    for (;;) {
      await this.resetPositions();
      const records = this.drainBuffered();
      if (records.length > 0) return records;
      const remainingMs = deadlineMs - clock.monotonicMs();
      if (remainingMs <= 0 && timeoutMs > 0) return [];
      await this.fetchOnce(Math.max(0, Math.min(this.settings.fetchMaxWaitMs, remainingMs)));
      if (timeoutMs <= 0) return this.drainBuffered();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.cluster.close();
  }

  private drainBuffered(): ConsumerRecord[] {
    const out: ConsumerRecord[] = [];
    for (const state of this.partitions.values()) {
      if (state.position === null) continue;
      const take = state.buffered.splice(0, this.settings.maxPollRecords - out.length);
      out.push(...take);
      if (take.length > 0) state.position = take[take.length - 1]!.offset + 1;
      if (state.buffered.length === 0 && state.nextFetchOffset > state.position) state.position = state.nextFetchOffset;
      if (out.length >= this.settings.maxPollRecords) break;
    }
    return out;
  }

  /** Resolves positions of partitions that need a reset, via ListOffsets. */
  private async resetPositions(): Promise<void> {
    const pending = [...this.partitions.values()].filter((s) => s.position === null);
    if (pending.length === 0) return;
    const queries = pending.map((state) => {
      const policy = state.reset ?? this.settings.autoOffsetReset;
      if (policy === 'none') {
        throw new KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE, `no position for ${state.topicPartition.topic}-${state.topicPartition.partition} and auto.offset.reset is none`);
      }
      return { ...state.topicPartition, timestamp: policy === 'earliest' ? OffsetSpec.earliest : OffsetSpec.latest };
    });
    const offsets = await listOffsets(this.cluster, queries, { isolationLevel: this.settings.isolationLevel });
    for (const state of pending) {
      const listed = offsets.get(topicPartitionKey(state.topicPartition.topic, state.topicPartition.partition));
      if (listed === undefined || state.position !== null) continue;
      state.position = listed.offset;
      state.nextFetchOffset = listed.offset;
      state.reset = null;
    }
  }

  /** One round of Fetch requests, one per leader of a partition with a position and nothing buffered. */
  private async fetchOnce(maxWaitMs: number): Promise<void> {
    const fetchable = [...this.partitions.values()].filter((s) => s.position !== null && s.buffered.length === 0);
    if (fetchable.length === 0) return;
    for (const topic of new Set(fetchable.map((s) => s.topicPartition.topic))) {
      await this.cluster.retry(() => this.cluster.topic(topic), { timeoutMs: this.cluster.requestTimeoutMs });
    }
    const byLeader = new Map<number, PartitionState[]>();
    for (const state of fetchable) {
      const leader = this.cluster.leaderFor(state.topicPartition.topic, state.topicPartition.partition);
      if (leader < 0) continue;
      byLeader.set(leader, [...(byLeader.get(leader) ?? []), state]);
    }
    if (byLeader.size === 0) {
      this.cluster.invalidate();
      await this.cluster.sleep(this.cluster.retryBackoffMs);
      return;
    }
    await Promise.all([...byLeader].map(([nodeId, states]) => this.fetchFrom(nodeId, states, maxWaitMs)));
  }

  private async fetchFrom(nodeId: number, states: PartitionState[], maxWaitMs: number): Promise<void> {
    let response: ResponseOf<typeof Fetch>;
    let version: number;
    try {
      const connection = await this.cluster.connection(nodeId);
      const useTopicIds = states.every((s) => this.topicId(s.topicPartition.topic) !== ZERO_UUID);
      ({ version, response } = await connection.sendVersioned(Fetch, this.fetchRequest(states, maxWaitMs), { versionMax: useTopicIds ? Infinity : 12 }));
    } catch (error) {
      if (!(error instanceof KafkaError) || !error.retriable) throw error;
      this.cluster.invalidate();
      await this.cluster.sleep(this.cluster.retryBackoffMs);
      return;
    }
    if (response.errorCode !== ErrorCode.NONE) throw new KafkaError(response.errorCode, 'Fetch');
    const names = new Map([...this.cluster.topics.values()].map((t) => [t.topicId, t.name]));
    for (const topic of response.responses) {
      const name = version >= 13 ? names.get(topic.topicId) : topic.topic;
      if (name === undefined) continue;
      for (const partition of topic.partitions) {
        const state = this.partitions.get(topicPartitionKey(name, partition.partitionIndex));
        if (state !== undefined && states.includes(state)) this.onPartitionData(state, partition);
      }
    }
  }

  private topicId(topic: string): string {
    return this.cluster.topics.get(topic)?.topicId ?? ZERO_UUID;
  }

  private fetchRequest(states: readonly PartitionState[], maxWaitMs: number) {
    const byTopic = new Map<string, PartitionState[]>();
    for (const state of states) byTopic.set(state.topicPartition.topic, [...(byTopic.get(state.topicPartition.topic) ?? []), state]);
    return {
      replicaId: -1,
      maxWaitMs,
      minBytes: this.settings.fetchMinBytes,
      maxBytes: this.settings.fetchMaxBytes,
      isolationLevel: IsolationLevel[this.settings.isolationLevel],
      sessionId: 0,
      sessionEpoch: -1,
      topics: [...byTopic].map(([topic, list]) => ({
        topic,
        topicId: this.topicId(topic),
        partitions: list.map((state) => ({
          partition: state.topicPartition.partition,
          currentLeaderEpoch: this.cluster.partitionInfo(topic, state.topicPartition.partition)?.leaderEpoch ?? -1,
          fetchOffset: state.position!,
          lastFetchedEpoch: -1,
          logStartOffset: -1,
          partitionMaxBytes: this.settings.maxPartitionFetchBytes,
        })),
      })),
      forgottenTopicsData: [],
      rackId: '',
    };
  }

  private onPartitionData(state: PartitionState, data: FetchPartitionResponse): void {
    const tp = state.topicPartition;
    if (data.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE) {
      if (this.settings.autoOffsetReset === 'none') throw new KafkaError(data.errorCode, `fetch offset ${state.position} is out of range for ${tp.topic}-${tp.partition}`);
      this.requestReset(state, this.settings.autoOffsetReset);
      return;
    }
    if (data.errorCode !== ErrorCode.NONE) {
      if (needsMetadataRefresh(data.errorCode) || new KafkaError(data.errorCode).retriable) {
        this.cluster.invalidate();
        return;
      }
      throw new KafkaError(data.errorCode, `Fetch for ${tp.topic}-${tp.partition}`);
    }
    state.highWatermark = data.highWatermark;
    if (data.records === null || data.records.length === 0) return;
    this.decodeBatches(state, data);
  }

  /** Buffers the records of every complete batch at or after the position. */
  private decodeBatches(state: PartitionState, data: FetchPartitionResponse): void {
    const tp = state.topicPartition;
    const position = state.position!;
    const aborted = new AbortedTransactions(this.settings.isolationLevel === 'read_committed' ? data.abortedTransactions ?? [] : []);
    let nextFetchOffset = position;
    for (const { position: at, header } of iterateBatches(data.records!)) {
      if (header.lastOffset < position) continue;
      nextFetchOffset = header.lastOffset + 1;
      const batch = data.records!.subarray(at, at + header.sizeBytes);
      const decoded = decodeRecords(batch);
      if (decoded.error !== null) throw new KafkaError(ErrorCode.CORRUPT_MESSAGE, `${tp.topic}-${tp.partition} at offset ${header.baseOffset}: ${decoded.error.message}`);
      const abortedBatch = aborted.isAborted(header);
      if (header.isControl) {
        for (const record of decoded.records) {
          const control = readControlRecord(record);
          if (!('code' in control) && control.type === 'ABORT') aborted.markerSeen(header.producerId);
        }
        continue;
      }
      if (abortedBatch) continue;
      for (const record of decoded.records) {
        if (record.offset < position) continue;
        state.buffered.push({
          topic: tp.topic,
          partition: tp.partition,
          offset: record.offset,
          timestamp: record.timestamp,
          timestampType: header.timestampType === 1 ? 'LogAppendTime' : 'CreateTime',
          key: record.key,
          value: record.value,
          headers: record.headers,
          leaderEpoch: header.partitionLeaderEpoch,
        });
      }
    }
    state.nextFetchOffset = nextFetchOffset;
  }
}

/**
 * The aborted transactions of one fetch response, consumed in offset order
 * (as Kafka's consumer does): a producer's transactional batches are
 * dropped from the aborted transaction's first offset until its ABORT marker.
 */
class AbortedTransactions {
  private readonly pending: { producerId: number; firstOffset: number }[];
  private readonly active = new Set<number>();

  constructor(list: readonly { producerId: number; firstOffset: number }[]) {
    this.pending = [...list].sort((a, b) => a.firstOffset - b.firstOffset);
  }

  isAborted(header: BatchHeader): boolean {
    while (this.pending.length > 0 && this.pending[0]!.firstOffset <= header.lastOffset) this.active.add(this.pending.shift()!.producerId);
    return header.isTransactional && this.active.has(header.producerId);
  }

  markerSeen(producerId: number): void {
    this.active.delete(producerId);
  }
}
