/**
 * DescribeQuorum (key 55), versions 0-2: the KRaft quorum as its leader sees
 * it (KIP-595): leader, epoch, high watermark, and each voter's and
 * observer's log end offset; v1 adds last fetch and caught-up times
 * (KIP-836); v2 error messages, directory ids and the voters' controller
 * endpoints (KIP-853: the log's VotersRecord, or controller.quorum.voters
 * for a static quorum). A node that does not
 * lead answers NOT_LEADER_OR_FOLLOWER, as Kafka's KafkaRaftClient does.
 *
 * Not done: a broker-only node does not forward it to the active controller
 * (it answers from its own Raft client, an observer: NOT_LEADER_OR_FOLLOWER).
 */
import { DescribeQuorum } from '../../protocol/schemas/55-describe-quorum.js';
import { parseQuorumVoters, QUORUM_VOTERS_CONFIG } from '../../common/quorum-config.js';
import { defineHandler } from '../handler.js';
import type { RaftApiContext } from '../api-context.js';

export function describeQuorumHandler(node: RaftApiContext) {
  return defineHandler({
    api: DescribeQuorum,
    handle: () => {
      const described = node.raft.describeQuorum();
      // A dynamic quorum's endpoints are the log's VotersRecord's; a static one's, controller.quorum.voters.
      const nodes = described.nodes ?? [];
      return { ...described, nodes: nodes.length > 0 ? nodes : voterNodes(node) };
    },
    errorResponse: (_request, errorCode) => ({ errorCode, errorMessage: null, topics: [] }),
  });
}

/** The voters' controller endpoints, under the first controller listener name. */
function voterNodes(node: RaftApiContext) {
  const listenerName = node.config.list('controller.listener.names')[0] ?? 'CONTROLLER';
  return parseQuorumVoters(node.config.list(QUORUM_VOTERS_CONFIG)).map((voter) => ({
    nodeId: voter.id,
    listeners: [{ name: listenerName, host: voter.host, port: voter.port }],
  }));
}
