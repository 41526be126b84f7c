/**
 * Several brokers' replica managers in one process, over one metadata log
 * driven by the controller's own operations: ISR changes go through the
 * real alterPartition and reach every broker as metadata deltas; leader
 * changes are PartitionChangeRecords as the controller writes them.
 * Followers reach leaders through an in-process connection that calls the
 * leader's replica manager as the Fetch and ListOffsets handlers do; a
 * broker can be cut off (its requests and the requests to it fail, as a
 * network partition) or stopped and restarted on the same directory.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { realEnv } from '../../src/io/env.js';
import { BrokerConfig } from '../../src/common/config.js';
import { silentLogger } from '../../src/common/logger.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { Fetch } from '../../src/protocol/schemas/01-fetch.js';
import { ListOffsets } from '../../src/protocol/schemas/02-list-offsets.js';
import { alterPartition, createTopics, type AlterPartitionReply } from '../../src/controller/replication-control.js';
import { applyRecords } from '../../src/metadata/delta.js';
import type { MetadataImage } from '../../src/metadata/image.js';
import { metadataRecord, type MetadataRecord } from '../../src/metadata/records.js';
import { ReplicaManager, type FetchPartitionInfo } from '../../src/replication/replica-manager.js';
import { buildBatch } from '../../src/protocol/records/records.js';
import type { LeaderConnection } from '../../src/replication/replica-fetcher.js';
import { clusterWith, commit, contextFor } from '../controller/helpers.js';

export const TOPIC = 'replicated';
export const tp = { topic: TOPIC, partition: 0 };

export interface HarnessOptions {
  brokers: number[];
  replicas: number[];
  topicConfigs?: Record<string, string>;
  brokerConfig?: Record<string, string | number>;
  /** broker.rack of each broker, as registered (KIP-392). */
  racks?: Record<number, string>;
}

export class ReplicationHarness {
  image: MetadataImage;
  readonly managers = new Map<number, ReplicaManager>();
  readonly dirs = new Map<number, string>();
  /** Brokers cut off from the others. */
  readonly cut = new Set<number>();
  /** While true, AlterPartition finds no controller (as during a controller failover). */
  controllerUnreachable = false;
  /** AlterPartition requests that found no controller. */
  alterPartitionFailures = 0;
  private readonly holders = new Map<number, { image: MetadataImage }>();
  private publishing: Promise<void> = Promise.resolve();
  /** Real timers are unref'd (src/io/clock.ts): this keeps the process alive while a test waits on them. */
  private readonly keepAlive = setInterval(() => undefined, 1000);

  private constructor(image: MetadataImage, private readonly options: HarnessOptions) {
    this.image = image;
  }

  static async start(options: HarnessOptions): Promise<ReplicationHarness> {
    let image = clusterWith(options.brokers, new Map(Object.entries(options.racks ?? {}).map(([id, rack]) => [Number(id), rack])));
    const configs = Object.entries(options.topicConfigs ?? {}).map(([name, value]) => ({ name, value }));
    image = commit(image, (context) =>
      createTopics(context, [{ name: TOPIC, numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: options.replicas }], configs }], { validateOnly: false }),
    ).image;
    const harness = new ReplicationHarness(image, options);
    for (const id of options.brokers) {
      harness.dirs.set(id, await mkdtemp(join(tmpdir(), `spool-repl-${id}-`)));
      await harness.startBroker(id);
    }
    return harness;
  }

  get partition() {
    return this.image.topicsByName.get(TOPIC)!.partitions.get(0)!;
  }

  /** Starts broker `id`'s replica manager on its directory and gives it the whole image. */
  async startBroker(id: number): Promise<ReplicaManager> {
    const holder = { image: this.image };
    this.holders.set(id, holder);
    const manager = new ReplicaManager({
      nodeId: id,
      config: BrokerConfig.fromObject({ 'log.dirs': this.dirs.get(id)!, 'replica.lag.time.max.ms': 1000, 'replica.fetch.wait.max.ms': 200, 'replica.fetch.backoff.ms': 50, ...this.options.brokerConfig }),
      env: realEnv,
      log: silentLogger,
      metadata: holder,
      brokerEpoch: () => this.image.brokers.get(id)?.epoch ?? -1,
      alterPartition: async (request) => this.alterPartition(id, request),
      connectToLeader: async (address) => this.connect(id, address.port - 9090),
    });
    await manager.start();
    this.managers.set(id, manager);
    const topic = this.image.topicsByName.get(TOPIC)!;
    await manager.onMetadataUpdate(
      { changedPartitions: [...topic.partitions.values()], deletedTopics: [], changedTopicConfigs: [topic], brokersChanged: true, changedFeatures: new Map(), offset: this.image.offset },
      this.image,
    );
    return manager;
  }

  async stopBroker(id: number): Promise<void> {
    const manager = this.managers.get(id);
    this.managers.delete(id);
    this.holders.delete(id);
    await manager?.stop();
  }

  /** Commits records and publishes the delta to every running broker, in order. */
  publish(records: readonly MetadataRecord[]): Promise<void> {
    const outcome = applyRecords(this.image, records.map((record, index) => ({ record, offset: this.image.offset + 1 + index })));
    this.image = outcome.image;
    const image = outcome.image;
    this.publishing = this.publishing.then(async () => {
      for (const [id, manager] of this.managers) {
        this.holders.get(id)!.image = image;
        await manager.onMetadataUpdate(outcome.delta, image);
      }
    });
    return this.publishing;
  }

  private async alterPartition(id: number, request: Parameters<typeof alterPartition>[1]): Promise<AlterPartitionReply> {
    if (this.cut.has(id) || this.controllerUnreachable) {
      this.alterPartitionFailures++;
      throw new Error(`broker ${id} cannot reach the controller`);
    }
    const outcome = alterPartition(contextFor(this.image), request);
    if (outcome.records.length > 0) await this.publish(outcome.records);
    return outcome.response;
  }

  /** The controller moves leadership (as an election or a fenced leader does): a new leader, the ISR it gives. */
  electLeader(leader: number, isr: number[]): Promise<void> {
    const partition = this.partition;
    return this.publish([metadataRecord('PartitionChangeRecord', { partitionId: 0, topicId: partition.topicId, leader, isr })]);
  }

  /** Fences a broker as the controller does after a missed session: it leaves every ISR. */
  fence(id: number): Promise<void> {
    const partition = this.partition;
    const records: MetadataRecord[] = [];
    if (partition.isr.includes(id)) records.push(metadataRecord('PartitionChangeRecord', { partitionId: 0, topicId: partition.topicId, isr: partition.isr.filter((r) => r !== id) }));
    records.push(metadataRecord('BrokerRegistrationChangeRecord', { brokerId: id, brokerEpoch: this.image.brokers.get(id)!.epoch, fenced: 1 }));
    return this.publish(records);
  }

  unfence(id: number): Promise<void> {
    return this.publish([metadataRecord('BrokerRegistrationChangeRecord', { brokerId: id, brokerEpoch: this.image.brokers.get(id)!.epoch, fenced: -1 })]);
  }

  /** An in-process connection from follower `from` to leader `to`, answering as the Fetch and ListOffsets handlers do. */
  private connect(from: number, to: number): Promise<LeaderConnection> {
    let closed = false;
    const harness = this;
    const connection = {
      get closed() {
        return closed;
      },
      destroy() {
        closed = true;
      },
      async send(api: { key: number }, body: any): Promise<any> {
        if (closed) throw new Error('connection closed');
        if (harness.cut.has(from) || harness.cut.has(to)) {
          closed = true;
          throw new Error(`network partition between ${from} and ${to}`);
        }
        const leader = harness.managers.get(to);
        if (leader === undefined) {
          closed = true;
          throw new Error(`broker ${to} is down`);
        }
        if (api.key === Fetch.key) {
          const answer = await fetchAnswer(leader, harness.image, body);
          // A partition that came up while the fetch waited loses the answer too.
          if (harness.cut.has(from) || harness.cut.has(to)) {
            closed = true;
            throw new Error(`network partition between ${from} and ${to}`);
          }
          return answer;
        }
        if (api.key === ListOffsets.key) return listOffsetsAnswer(leader, body);
        throw new Error(`unexpected API ${api.key}`);
      },
    };
    return Promise.resolve(connection as unknown as LeaderConnection);
  }

  async close(): Promise<void> {
    for (const id of [...this.managers.keys()]) await this.stopBroker(id);
    for (const dir of this.dirs.values()) await rm(dir, { recursive: true, force: true });
    clearInterval(this.keepAlive);
  }
}

async function fetchAnswer(leader: ReplicaManager, image: MetadataImage, body: any) {
  const infos: FetchPartitionInfo[] = [];
  const names: string[] = [];
  for (const topic of body.topics) {
    const name = image.topicsById.get(topic.topicId)?.name ?? topic.topic;
    for (const partition of topic.partitions) {
      names.push(name);
      infos.push({
        topicPartition: { topic: name, partition: partition.partition },
        fetchOffset: partition.fetchOffset,
        logStartOffset: partition.logStartOffset,
        maxBytes: partition.partitionMaxBytes,
        currentLeaderEpoch: partition.currentLeaderEpoch,
        lastFetchedEpoch: partition.lastFetchedEpoch,
        replicaHighWatermark: partition.highWatermark,
      });
    }
  }
  const params = {
    replicaId: body.replicaState.replicaId,
    replicaEpoch: body.replicaState.replicaEpoch,
    maxWaitMs: body.maxWaitMs,
    minBytes: body.minBytes,
    maxBytes: body.maxBytes,
    isolation: 'logEnd' as const,
    fetchOnlyFromLeader: true,
  };
  const data = await leader.fetchMessages(params, infos);
  return {
    errorCode: ErrorCode.NONE,
    responses: data.map((d, index) => ({
      topic: names[index],
      topicId: '',
      partitions: [{
        partitionIndex: infos[index]!.topicPartition.partition,
        errorCode: d.errorCode,
        highWatermark: d.highWatermark,
        lastStableOffset: d.lastStableOffset,
        logStartOffset: d.logStartOffset,
        divergingEpoch: d.divergingEpoch ?? { epoch: -1, endOffset: -1 },
        records: d.records,
      }],
    })),
  };
}

async function listOffsetsAnswer(leader: ReplicaManager, body: any) {
  const topic = body.topics[0];
  const request = topic.partitions[0];
  const found = await leader.fetchOffsetForTimestamp({
    topicPartition: { topic: topic.name, partition: request.partitionIndex },
    timestamp: request.timestamp,
    currentLeaderEpoch: request.currentLeaderEpoch,
    isolationLevel: null,
    fetchOnlyFromLeader: true,
  });
  return { topics: [{ name: topic.name, partitions: [{ partitionIndex: request.partitionIndex, errorCode: found.errorCode, offset: found.offset }] }] };
}

/** Appends one record to the harness topic on `manager` (a client's produce), with `acks`. */
export function produceTo(manager: ReplicaManager, value: string, acks: number) {
  const records = buildBatch({ records: [{ value, timestamp: Date.now() }] });
  return manager.appendRecords({ timeoutMs: 15_000, requiredAcks: acks, internalTopicsAllowed: false, entries: [{ topicPartition: tp, records: Buffer.from(records) }] }).then((r) => r.get(`${TOPIC}-0`)!);
}

/** Waits until `predicate` holds (checked every 10 ms), failing after `timeoutMs`. */
export async function until(what: string, predicate: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(10);
  }
}
