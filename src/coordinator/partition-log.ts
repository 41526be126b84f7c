/**
 * A coordinator's view of its topic (`__consumer_offsets`, `__transaction_state`) over the broker's replica
 * manager: appends go to the partition as its leader with acks=all (the
 * write returns once the high watermark covers it, as a coordinator write
 * must be committed before its response), reads come from the leader up to
 * its log end (a coordinator loads all of a new leader's log, see
 * CoordinatorLog.read). Typed structurally so the coordinator rooms do not depend
 * on the replication room's internals.
 */
import { ErrorCode } from '../protocol/errors.js';
import type { CoordinatorLog } from './runtime.js';
import { topicPartitionKey } from '../protocol/topic-partition.js';

/** The part of the ReplicaManager the coordinator uses (ReplicaManager satisfies it). */
export interface ReplicaAccess {
  appendRecords(request: {
    timeoutMs: number;
    requiredAcks: number;
    internalTopicsAllowed: boolean;
    origin: 'coordinator';
    transactionVersion?: number;
    entries: readonly { topicPartition: { topic: string; partition: number }; records: Buffer }[];
  }): Promise<ReadonlyMap<string, { errorCode: number; baseOffset: number }>>;
  readFromLog(
    params: { replicaId: number; maxWaitMs: number; minBytes: number; maxBytes: number; isolation: 'logEnd'; fetchOnlyFromLeader: boolean },
    infos: readonly { topicPartition: { topic: string; partition: number }; fetchOffset: number; logStartOffset: number; maxBytes: number; currentLeaderEpoch: number; lastFetchedEpoch: number }[],
  ): Promise<readonly { errorCode: number; records: Buffer }[]>;
}

export function coordinatorLogOver(replicas: ReplicaAccess, options: { topic: string; appendTimeoutMs: number }): CoordinatorLog {
  return {
    async append(partition, batch, appendOptions) {
      const topicPartition = { topic: options.topic, partition };
      const results = await replicas.appendRecords({
        timeoutMs: options.appendTimeoutMs,
        requiredAcks: -1,
        internalTopicsAllowed: true,
        origin: 'coordinator',
        transactionVersion: appendOptions?.transactionVersion ?? 0,
        entries: [{ topicPartition, records: batch }],
      });
      const result = results.get(topicPartitionKey({ topic: options.topic, partition }));
      if (result === undefined) return { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, baseOffset: -1 };
      return { errorCode: result.errorCode, baseOffset: result.baseOffset };
    },
    async read(partition, fromOffset, maxBytes) {
      const [data] = await replicas.readFromLog(
        { replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes, isolation: 'logEnd', fetchOnlyFromLeader: true },
        [{ topicPartition: { topic: options.topic, partition }, fetchOffset: fromOffset, logStartOffset: -1, maxBytes, currentLeaderEpoch: -1, lastFetchedEpoch: -1 }],
      );
      if (data === undefined) return { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, records: Buffer.alloc(0) };
      return { errorCode: data.errorCode, records: data.records };
    },
  };
}
