/**
 * What the web console reads: the narrow view of one node that its JSON API
 * is built from (src/node/node.ts hands it over, as it hands a handler its
 * ApiContext). Every figure the console shows comes from these objects, as
 * this node knows it: the metadata image (the whole cluster's registrations)
 * plus what it holds locally (logs, groups and transactional ids it
 * coordinates, the Raft quorum if it leads it).
 */
import type { MetadataView } from '../server/api-context.js';
import type { ReplicaManager } from '../replication/replica-manager.js';
import type { GroupCoordinator } from '../group/coordinator.js';
import type { TransactionCoordinator } from '../txn/coordinator.js';
import type { LeaderAndEpoch } from '../raft/raft-client.js';
import type { DescribeQuorum } from '../protocol/schemas/55-describe-quorum.js';
import type { Partial, ResponseOf } from '../protocol/schema.js';

/** The node's Raft client, as far as the console reads it. */
export interface QuorumSource {
  readonly leaderAndEpoch: LeaderAndEpoch;
  /** The quorum's high watermark as this node knows it, null while unknown. */
  readonly highWatermark: number | null;
  /** The voters' ids as of the log end. */
  voterIds(): readonly number[];
  /** DescribeQuorum's answer (NOT_LEADER_OR_FOLLOWER in the partition unless this node leads). */
  describeQuorum(): Partial<ResponseOf<typeof DescribeQuorum>>;
}

/** The broker's rooms; null on a controller-only node. */
export interface BrokerSources {
  readonly replicaManager: ReplicaManager;
  readonly groupCoordinator: GroupCoordinator;
  readonly transactionCoordinator: TransactionCoordinator;
}

export interface ConsoleSources {
  readonly nodeId: number;
  readonly roles: readonly string[];
  readonly metadata: MetadataView;
  readonly broker: BrokerSources | null;
  /** Null while the node runs no Raft client (never, once started). */
  readonly quorum: QuorumSource | null;
  readonly nowMs: () => number;
  /** console.actions.enable: reset offsets and delete records are allowed. */
  readonly actionsEnabled: boolean;
}
