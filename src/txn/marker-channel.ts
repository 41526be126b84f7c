/**
 * Sends a transaction's markers to the leaders of its partitions (Kafka's
 * TransactionMarkerChannelManager): the partitions this node leads take
 * the marker through the local writer, each other leader gets a
 * WriteTxnMarkers request over the inter-broker channel, all at once.
 *
 * Answers are per partition, as the coordinator's retry loop wants them:
 * - no leader in the metadata image, or a leader with no endpoint:
 *   NOT_LEADER_OR_FOLLOWER, retried once the metadata moves on;
 * - a lost connection or a request past request.timeout.ms:
 *   NETWORK_EXCEPTION for its partitions (Kafka re-enqueues them on a
 *   disconnect);
 * - a partition the leader's answer leaves out: UNKNOWN_SERVER_ERROR.
 */
import type { Logger } from '../common/logger.js';
import type { MetadataImage } from '../metadata/image.js';
import { ErrorCode } from '../protocol/errors.js';
import { WriteTxnMarkers } from '../protocol/schemas/27-write-txn-markers.js';
import { groupByTopic, topicPartitionKey, type TopicPartition } from '../protocol/topic-partition.js';
import { NoEndpointError, type InterBrokerChannel } from '../server/inter-broker-channel.js';
import type { TxnMarker, TxnMarkerWriter } from './coordinator.js';

type PartitionResult = TopicPartition & { errorCode: number };

export interface MarkerChannelOptions {
  nodeId: number;
  logger: Logger;
  image: () => MetadataImage;
  /** The writer for the partitions this node leads. */
  local: TxnMarkerWriter;
  channel: Pick<InterBrokerChannel, 'send'>;
}

export class TxnMarkerChannel implements TxnMarkerWriter {
  constructor(private readonly options: MarkerChannelOptions) {}

  async writeMarkers(marker: TxnMarker): Promise<PartitionResult[]> {
    const image = this.options.image();
    const byLeader = new Map<number, TopicPartition[]>();
    const results: PartitionResult[] = [];
    for (const tp of marker.partitions) {
      const registration = image.topicsByName.get(tp.topic)?.partitions.get(tp.partition);
      // A partition the image does not know goes to the local writer, which answers UNKNOWN_TOPIC_OR_PARTITION.
      const target = registration === undefined ? this.options.nodeId : registration.leader;
      if (target < 0) {
        results.push({ ...tp, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER });
        continue;
      }
      let list = byLeader.get(target);
      if (list === undefined) byLeader.set(target, (list = []));
      list.push(tp);
    }
    const sent = [...byLeader].map(([leader, partitions]) =>
      leader === this.options.nodeId ? this.options.local.writeMarkers({ ...marker, partitions }) : this.sendTo(leader, { ...marker, partitions }),
    );
    for (const answered of await Promise.all(sent)) results.push(...answered);
    return results;
  }

  private async sendTo(leader: number, marker: TxnMarker): Promise<PartitionResult[]> {
    try {
      const response = await this.options.channel.send(leader, WriteTxnMarkers, {
        markers: [{
          producerId: marker.producerId,
          producerEpoch: marker.producerEpoch,
          transactionResult: marker.committed,
          coordinatorEpoch: marker.coordinatorEpoch,
          transactionVersion: marker.transactionVersion ?? 0,
          topics: groupByTopic(marker.partitions).map(({ topic, partitions }) => ({ name: topic, partitionIndexes: partitions })),
        }],
      });
      const answered = new Map<string, number>();
      for (const answer of response.markers) {
        if (answer.producerId !== marker.producerId) continue;
        for (const topic of answer.topics) for (const p of topic.partitions) answered.set(topicPartitionKey({ topic: topic.name, partition: p.partitionIndex }), p.errorCode);
      }
      return marker.partitions.map((tp) => ({ ...tp, errorCode: answered.get(topicPartitionKey(tp)) ?? ErrorCode.UNKNOWN_SERVER_ERROR }));
    } catch (error) {
      const errorCode = error instanceof NoEndpointError ? ErrorCode.NOT_LEADER_OR_FOLLOWER : ErrorCode.NETWORK_EXCEPTION;
      this.options.logger.debug(`transaction markers: WriteTxnMarkers to broker ${leader} failed: ${(error as Error).message}`);
      return marker.partitions.map((tp) => ({ ...tp, errorCode }));
    }
  }
}
