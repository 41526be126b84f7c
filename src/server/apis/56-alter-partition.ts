/**
 * AlterPartition (key 56), versions 2-3, on the controller listener
 * (KIP-497, KIP-841): a partition leader asks the controller to change the
 * ISR of partitions it leads. v2 names topics by id and sends the ISR as
 * broker ids (their epochs are not checked, -1); v3 sends each member's
 * broker epoch (KIP-903), and the controller refuses a member registered
 * with another epoch. The controller's checks and error codes are Kafka's
 * (controller/replication-control.ts, alterPartition); a stale broker epoch
 * is the top-level STALE_BROKER_EPOCH, NOT_CONTROLLER when this controller
 * is not active.
 *
 * On a reassigning partition the ISR change may complete the reassignment
 * (controller/partition-reassignment.ts); a leader that loses leadership by
 * it gets NEW_LEADER_ELECTED, as from Kafka's controller.
 *
 * With eligible.leader.replicas.version 1, an ISR shrinking below
 * min.insync.replicas keeps its members in the ELR (KIP-966); a leader
 * reporting RECOVERED ends the RECOVERING state of an unclean election.
 */
import { AlterPartition } from '../../protocol/schemas/56-alter-partition.js';
import { defineHandler } from '../handler.js';
import type { ControllerApiContext } from '../api-context.js';
import { onActiveController } from './controller-request.js';

export function alterPartitionHandler(node: ControllerApiContext) {
  return defineHandler({
    api: AlterPartition,
    async handle(request, context) {
      const version = context.apiVersion;
      return onActiveController(
        async () => {
          const reply = await node.controller.alterPartition({
            brokerId: request.brokerId,
            brokerEpoch: request.brokerEpoch,
            topics: request.topics.map((topic) => ({
              topicId: topic.topicId,
              partitions: topic.partitions.map((partition) => ({
                partitionIndex: partition.partitionIndex,
                leaderEpoch: partition.leaderEpoch,
                newIsrWithEpochs: version >= 3 ? partition.newIsrWithEpochs : partition.newIsr.map((brokerId) => ({ brokerId, brokerEpoch: -1 })),
                leaderRecoveryState: partition.leaderRecoveryState,
                partitionEpoch: partition.partitionEpoch,
              })),
            })),
          });
          return { throttleTimeMs: 0, errorCode: reply.errorCode, topics: reply.topics };
        },
        (errorCode) => ({ throttleTimeMs: 0, errorCode, topics: [] }),
      );
    },
    errorResponse: (_request, errorCode) => ({ throttleTimeMs: 0, errorCode, topics: [] }),
  });
}
