/**
 * Writes transaction markers into the partitions this node leads (the
 * partition leader's side of WriteTxnMarkers): data partitions take the
 * COMMIT or ABORT control batch through the replica manager (acks=all),
 * where the producer state checks the epochs (INVALID_PRODUCER_EPOCH,
 * TRANSACTION_COORDINATOR_FENCED), ends the transaction, records an aborted
 * one in the transaction index and moves the last stable offset;
 * `__consumer_offsets` partitions take it through the group coordinator,
 * which also commits or drops the producer's pending offsets. An error code
 * per partition: UNKNOWN_TOPIC_OR_PARTITION for a partition the metadata
 * does not know, else the append's.
 */
import type { Clock } from '../io/clock.js';
import type { MetadataImage } from '../metadata/image.js';
import { ErrorCode } from '../protocol/errors.js';
import { buildControlBatch } from '../protocol/records/control.js';
import { topicPartitionKey } from '../protocol/topic-partition.js';
import { CONSUMER_OFFSETS_TOPIC } from '../group/placement.js';
import type { TxnMarker, TxnMarkerWriter } from './coordinator.js';

type TopicPartitionRef = { topic: string; partition: number };

/** The parts of the replica manager and group coordinator a marker needs (both satisfy them). */
export interface MarkerTargets {
  image: () => MetadataImage;
  clock: Clock;
  /** request.timeout.ms: how long an acks=all marker append may wait. */
  requestTimeoutMs: number;
  replicas: {
    appendRecords(request: {
      timeoutMs: number;
      requiredAcks: number;
      internalTopicsAllowed: boolean;
      origin: 'coordinator';
      transactionVersion: number;
      entries: readonly { topicPartition: TopicPartitionRef; records: Buffer }[];
    }): Promise<ReadonlyMap<string, { errorCode: number }>>;
  };
  groups: {
    completeTransaction(partition: number, marker: { producerId: number; producerEpoch: number; coordinatorEpoch: number; committed: boolean; transactionVersion?: number }): Promise<number>;
  };
}

export function localMarkerWriter(targets: MarkerTargets): TxnMarkerWriter {
  return { writeMarkers: (marker) => writeMarkers(targets, marker) };
}

async function writeMarkers(targets: MarkerTargets, marker: TxnMarker): Promise<{ topic: string; partition: number; errorCode: number }[]> {
  const image = targets.image();
  const results: { topic: string; partition: number; errorCode: number }[] = [];
  const entries: { topicPartition: TopicPartitionRef; records: Buffer }[] = [];
  const groupWrites: Promise<void>[] = [];
  for (const { topic, partition } of marker.partitions) {
    if (image.topicsByName.get(topic)?.partitions.has(partition) !== true) {
      results.push({ topic, partition, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION });
    } else if (topic === CONSUMER_OFFSETS_TOPIC) {
      groupWrites.push(targets.groups.completeTransaction(partition, marker).then((errorCode) => void results.push({ topic, partition, errorCode })));
    } else {
      const records = buildControlBatch({ ...marker, type: marker.committed ? 'COMMIT' : 'ABORT', timestamp: targets.clock.nowMs() });
      entries.push({ topicPartition: { topic, partition }, records });
    }
  }
  if (entries.length > 0) {
    const appended = await targets.replicas.appendRecords({ timeoutMs: targets.requestTimeoutMs, requiredAcks: -1, internalTopicsAllowed: true, origin: 'coordinator', transactionVersion: marker.transactionVersion ?? 0, entries });
    for (const { topicPartition } of entries) {
      results.push({ ...topicPartition, errorCode: appended.get(topicPartitionKey(topicPartition))?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR });
    }
  }
  await Promise.all(groupWrites);
  return results;
}
