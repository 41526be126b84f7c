/**
 * MetadataLoader: turns committed `__cluster_metadata` batches into a
 * metadata image and delta and publishes them to its subscribers (the
 * replica manager, the group coordinator, ...), as Kafka's MetadataLoader
 * does for its MetadataPublishers.
 *
 * It is a Raft listener on every node, whatever its roles. Until the node
 * has caught up (registered, for a broker) it only replays; `publishFirst`
 * then hands every publisher the whole image as one delta, and every later
 * batch is published as its delta, each publisher awaited in order, before
 * Raft delivers the next batch. So an operation that waits for its records
 * to commit finds them in every publisher's state.
 *
 * Metadata transactions (KIP-868, which Kafka's controller uses for a new
 * cluster's bootstrap records): records from a BeginTransactionRecord to its
 * EndTransactionRecord are applied and published as one delta, none of them
 * before the end; an AbortTransactionRecord drops them. No snapshot is taken
 * while a transaction is open.
 *
 * Snapshots: once the bytes applied since the last snapshot pass
 * metadata.log.max.record.bytes.between.snapshots, the image is written as
 * a snapshot, outside the commit path.
 */
import type { BrokerConfig } from '../common/config.js';
import type { Logger } from '../common/logger.js';
import type { MetadataDelta, MetadataImage, MetadataPublisher } from '../metadata/image.js';
import { emptyImage, fullDelta, imageFromSnapshot, replayBatch, replayRecords } from '../metadata/delta.js';
import { imageToRecords } from '../metadata/image-writer.js';
import type { MetadataRecord } from '../metadata/records.js';
import { brokerConfigLayers, resolveTopicConfig, type BrokerConfigLayers, type TopicConfig } from '../metadata/topic-config.js';
import type { Batch, RaftListener } from '../raft/raft-client.js';
import type { OffsetAndEpoch, SnapshotContent } from '../raft/snapshot.js';

/** What the loader writes snapshots through (the Raft client). */
export interface SnapshotWriter {
  createSnapshot(id: OffsetAndEpoch, records: readonly MetadataRecord[], appendTimestamp: number): Promise<unknown>;
}

export interface MetadataLoaderOptions {
  nodeId: number;
  config: BrokerConfig;
  log: Logger;
  /** Called when a snapshot could not be written (the node decides what a disk error means). */
  onSnapshotFailure: (error: unknown, message: string) => void;
}

function isTransactionMarker(record: MetadataRecord): boolean {
  return record.type === 'BeginTransactionRecord' || record.type === 'EndTransactionRecord' || record.type === 'AbortTransactionRecord';
}

export class MetadataLoader implements RaftListener<MetadataRecord> {
  private readonly publishers: MetadataPublisher[] = [];
  private current: MetadataImage = emptyImage('');
  private published = false;
  private writer: SnapshotWriter | null = null;
  private bytesSinceSnapshot = 0;
  /** The records of an open metadata transaction, null outside one. */
  private transaction: { record: MetadataRecord; offset: number }[] | null = null;
  private snapshotting: Promise<void> = Promise.resolve();
  private readonly ready: Promise<void>;
  private markReady!: () => void;
  private markFailed!: (error: Error) => void;

  constructor(private readonly options: MetadataLoaderOptions) {
    this.ready = new Promise<void>((resolve, reject) => {
      this.markReady = resolve;
      this.markFailed = reject;
    });
    this.ready.catch(() => undefined);
  }

  /** The cluster the image belongs to (from meta.properties) and where snapshots go; before Raft starts. */
  open(clusterId: string, writer: SnapshotWriter): void {
    this.current = emptyImage(clusterId);
    this.writer = writer;
  }

  /** Publishers get the first image from publishFirst, then every delta, in order. */
  addPublisher(publisher: MetadataPublisher): void {
    if (this.published) throw new Error(`publisher ${publisher.name} added after the first image was published`);
    this.publishers.push(publisher);
  }

  /** The latest image this node has applied (and published, once running). */
  get image(): MetadataImage {
    return this.current;
  }

  /** Resolves once the node has started (a broker: unfenced, after the first image); handlers await it before reading metadata. */
  whenReady(): Promise<void> {
    return this.ready;
  }

  /** Publishes the whole image as the first delta, and from then on every committed batch. */
  async publishFirst(): Promise<void> {
    await this.publish(fullDelta(this.current));
  }

  /** The node has started: handlers waiting for the metadata go on. */
  markStarted(): void {
    this.markReady();
  }

  /** Start failed: whoever awaits whenReady() gets the error. */
  fail(error: Error): void {
    this.markFailed(error);
  }

  // ---- RaftListener

  handleLoadSnapshot(snapshot: SnapshotContent<MetadataRecord>): void {
    this.current = imageFromSnapshot(this.current.clusterId, { endOffset: snapshot.id.offset, records: snapshot.records });
  }

  async handleCommit(batch: Batch<MetadataRecord>): Promise<void> {
    this.bytesSinceSnapshot += batch.sizeInBytes;
    if (this.transaction === null && !batch.records.some(isTransactionMarker)) {
      await this.apply(replayBatch(this.current, batch));
    } else {
      await this.commitWithTransactions(batch);
    }
    if (this.transaction === null) this.maybeSnapshot(batch);
  }

  private async apply(replayed: { image: MetadataImage; delta: MetadataDelta }): Promise<void> {
    this.current = replayed.image;
    if (this.published) await this.publish(replayed.delta);
  }

  /** A batch inside or around a metadata transaction: what is outside applies at once, the transaction at its end. */
  private async commitWithTransactions(batch: Batch<MetadataRecord>): Promise<void> {
    let outside: { record: MetadataRecord; offset: number }[] = [];
    const applyOutside = async (lastOffset: number) => {
      if (outside.length > 0) await this.apply(replayRecords(this.current, outside, lastOffset));
      outside = [];
    };
    for (const [index, record] of batch.records.entries()) {
      const offset = batch.baseOffset + index;
      switch (record.type) {
        case 'BeginTransactionRecord':
          await applyOutside(offset - 1);
          if (this.transaction !== null) this.options.log.warn(`metadata: a transaction begins at ${offset} inside another; the first is dropped`);
          this.transaction = [];
          break;
        case 'EndTransactionRecord': {
          const records = this.transaction ?? [];
          this.transaction = null;
          await this.apply(replayRecords(this.current, records, offset));
          break;
        }
        case 'AbortTransactionRecord':
          this.options.log.info(`metadata: transaction aborted at ${offset}: ${record.data.reason ?? 'no reason given'}`);
          this.transaction = null;
          break;
        default:
          (this.transaction ?? outside).push({ record, offset });
      }
    }
    await applyOutside(batch.lastOffset);
    if (this.transaction === null && this.current.offset < batch.lastOffset) await this.apply(replayRecords(this.current, [], batch.lastOffset));
  }

  handleLeaderChange(): void {}

  private async publish(delta: MetadataDelta): Promise<void> {
    this.published = true;
    const image = this.current;
    for (const publisher of this.publishers) await publisher.onMetadataUpdate(delta, image);
  }

  private maybeSnapshot(batch: Batch<MetadataRecord>): void {
    const limitBytes = this.options.config.int('metadata.log.max.record.bytes.between.snapshots');
    const writer = this.writer;
    if (this.bytesSinceSnapshot < limitBytes || writer === null) return;
    this.bytesSinceSnapshot = 0;
    const image = this.current;
    const id = { offset: image.offset + 1, epoch: batch.epoch };
    // Written outside the commit path: the raft queue is busy delivering this very batch.
    this.snapshotting = this.snapshotting
      .then(() => writer.createSnapshot(id, imageToRecords(image), batch.appendTimestamp))
      .then(() => this.options.log.info(`metadata: wrote snapshot ${id.offset}-${id.epoch}`))
      .catch((error: unknown) => this.options.onSnapshotFailure(error, `metadata: snapshot ${id.offset}-${id.epoch} failed`));
  }

  /** Resolves when snapshots started so far are written (tests, shutdown). */
  awaitSnapshots(): Promise<void> {
    return this.snapshotting;
  }

  // ---- topic configs for publishers and handlers

  /** The broker config layers (static and dynamic) topic configs fall back to. */
  brokerConfigLayers(image: MetadataImage = this.current): BrokerConfigLayers {
    return brokerConfigLayers(this.options.config, image.brokerConfigs, this.options.nodeId);
  }

  /** The effective config of a topic (overrides over broker defaults). */
  topicConfig(topicName: string, image: MetadataImage = this.current): TopicConfig {
    return resolveTopicConfig(image.topicsByName.get(topicName)?.configs ?? new Map(), this.brokerConfigLayers(image));
  }
}
