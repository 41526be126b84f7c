/**
 * A partition leader's questions to the transaction coordinator (Kafka's
 * AddPartitionsToTxnManager, KIP-890): before a transactional batch from a
 * producer with no transaction open in the partition is appended, the
 * coordinator of its transactional id verifies the partition is in the
 * transaction (part 1) or adds it (part 2, Produce v12+ and TxnOffsetCommit
 * v5+).
 *
 * The coordinator is the leader of the id's `__transaction_state`
 * partition. When that is this node, the local coordinator answers; else
 * an AddPartitionsToTxn v4+ (the brokers' batched form, verifyOnly for a
 * verification) goes to it over the inter-broker channel. No leader, or no
 * endpoint for it: COORDINATOR_NOT_AVAILABLE; a lost connection or a
 * request past request.timeout.ms: NETWORK_EXCEPTION. The callers map
 * these as Kafka's ReplicaManager does (src/server/apis/00-produce.ts).
 *
 * Kafka batches the requests of many producers per coordinator; Spool sends
 * one request per verification.
 */
import type { MetadataImage } from '../metadata/image.js';
import { ErrorCode } from '../protocol/errors.js';
import { AddPartitionsToTxn } from '../protocol/schemas/24-add-partitions-to-txn.js';
import { TRANSACTION_STATE_TOPIC } from '../group/placement.js';
import { groupByTopic, topicPartitionKey } from '../protocol/topic-partition.js';
import { NoEndpointError, type InterBrokerChannel } from '../server/inter-broker-channel.js';
import type { TransactionCoordinator } from './coordinator.js';
import type { ProducerIdAndEpoch, TopicPartitionRef } from './shard.js';

export interface AddPartitionsManagerOptions {
  nodeId: number;
  image: () => MetadataImage;
  coordinator: Pick<TransactionCoordinator, 'partitionFor' | 'verifyPartitions' | 'addPartitions' | 'offsetsPartitionFor'>;
  channel: Pick<InterBrokerChannel, 'send'>;
}

export class AddPartitionsToTxnManager {
  constructor(private readonly options: AddPartitionsManagerOptions) {}

  /** KIP-890 part 1: an error code per partition, NONE where the partition is in the producer's open transaction. */
  async verify(transactionalId: string, producer: ProducerIdAndEpoch, partitions: readonly TopicPartitionRef[]): Promise<number[]> {
    const coordinatorId = this.coordinatorOf(transactionalId);
    if (coordinatorId === this.options.nodeId) return this.options.coordinator.verifyPartitions(transactionalId, producer, partitions);
    return this.ask(coordinatorId, transactionalId, producer, partitions, true);
  }

  /** KIP-890 part 2: the partitions join the producer's transaction (as a Transactions V2 client's); one error code. */
  async add(transactionalId: string, producer: ProducerIdAndEpoch, partitions: readonly TopicPartitionRef[]): Promise<number> {
    const coordinatorId = this.coordinatorOf(transactionalId);
    if (coordinatorId === this.options.nodeId) return this.options.coordinator.addPartitions(transactionalId, producer, partitions, 2);
    const errors = await this.ask(coordinatorId, transactionalId, producer, partitions, false);
    return errors.find((errorCode) => errorCode !== ErrorCode.NONE) ?? ErrorCode.NONE;
  }

  /** A V2 TxnOffsetCommit: the group's `__consumer_offsets` partition joins the transaction. */
  addOffsets(transactionalId: string, producer: ProducerIdAndEpoch, groupId: string): Promise<number> {
    return this.add(transactionalId, producer, [this.options.coordinator.offsetsPartitionFor(groupId)]);
  }

  /** The coordinator's node id, -1 when the metadata names no leader for the id's partition. */
  private coordinatorOf(transactionalId: string): number {
    const partition = this.options.coordinator.partitionFor(transactionalId);
    return this.options.image().topicsByName.get(TRANSACTION_STATE_TOPIC)?.partitions.get(partition)?.leader ?? -1;
  }

  private async ask(coordinatorId: number, transactionalId: string, producer: ProducerIdAndEpoch, partitions: readonly TopicPartitionRef[], verifyOnly: boolean): Promise<number[]> {
    if (coordinatorId < 0) return partitions.map(() => ErrorCode.COORDINATOR_NOT_AVAILABLE);
    try {
      const response = await this.options.channel.send(coordinatorId, AddPartitionsToTxn, {
        transactions: [{ transactionalId, ...producer, verifyOnly, topics: groupByTopic(partitions).map(({ topic, partitions: list }) => ({ name: topic, partitions: list })) }],
      });
      if (response.errorCode !== ErrorCode.NONE) return partitions.map(() => response.errorCode);
      const answered = new Map<string, number>();
      for (const transaction of response.resultsByTransaction) {
        if (transaction.transactionalId !== transactionalId) continue;
        for (const topic of transaction.topicResults) for (const p of topic.resultsByPartition) answered.set(topicPartitionKey({ topic: topic.name, partition: p.partitionIndex }), p.partitionErrorCode);
      }
      return partitions.map((tp) => answered.get(topicPartitionKey(tp)) ?? ErrorCode.UNKNOWN_SERVER_ERROR);
    } catch (error) {
      return partitions.map(() => (error instanceof NoEndpointError ? ErrorCode.COORDINATOR_NOT_AVAILABLE : ErrorCode.NETWORK_EXCEPTION));
    }
  }
}
