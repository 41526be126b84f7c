/** API keys 52 and up. */
import type { ApiDef } from '../schema.js';
import { Vote } from './52-vote.js';
import { BeginQuorumEpoch } from './53-begin-quorum-epoch.js';
import { EndQuorumEpoch } from './54-end-quorum-epoch.js';
import { DescribeQuorum } from './55-describe-quorum.js';
import { AlterPartition } from './56-alter-partition.js';
import { UpdateFeatures } from './57-update-features.js';
import { Envelope } from './58-envelope.js';
import { FetchSnapshot } from './59-fetch-snapshot.js';
import { DescribeCluster } from './60-describe-cluster.js';
import { DescribeProducers } from './61-describe-producers.js';
import { BrokerRegistration } from './62-broker-registration.js';
import { BrokerHeartbeat } from './63-broker-heartbeat.js';
import { UnregisterBroker } from './64-unregister-broker.js';
import { DescribeTransactions } from './65-describe-transactions.js';
import { ListTransactions } from './66-list-transactions.js';
import { AllocateProducerIds } from './67-allocate-producer-ids.js';
import { ConsumerGroupHeartbeat } from './68-consumer-group-heartbeat.js';
import { ConsumerGroupDescribe } from './69-consumer-group-describe.js';
import { ControllerRegistration } from './70-controller-registration.js';
import { GetTelemetrySubscriptions } from './71-get-telemetry-subscriptions.js';
import { PushTelemetry } from './72-push-telemetry.js';
import { AssignReplicasToDirs } from './73-assign-replicas-to-dirs.js';
import { ListConfigResources } from './74-list-config-resources.js';
import { DescribeTopicPartitions } from './75-describe-topic-partitions.js';
import { ShareGroupHeartbeat } from './76-share-group-heartbeat.js';
import { ShareGroupDescribe } from './77-share-group-describe.js';
import { ShareFetch } from './78-share-fetch.js';
import { ShareAcknowledge } from './79-share-acknowledge.js';
import { AddRaftVoter } from './80-add-raft-voter.js';
import { RemoveRaftVoter } from './81-remove-raft-voter.js';
import { UpdateRaftVoter } from './82-update-raft-voter.js';
import { InitializeShareGroupState } from './83-initialize-share-group-state.js';
import { ReadShareGroupState } from './84-read-share-group-state.js';
import { WriteShareGroupState } from './85-write-share-group-state.js';
import { DeleteShareGroupState } from './86-delete-share-group-state.js';
import { ReadShareGroupStateSummary } from './87-read-share-group-state-summary.js';
import { StreamsGroupHeartbeat } from './88-streams-group-heartbeat.js';
import { StreamsGroupDescribe } from './89-streams-group-describe.js';
import { DescribeShareGroupOffsets } from './90-describe-share-group-offsets.js';
import { AlterShareGroupOffsets } from './91-alter-share-group-offsets.js';
import { DeleteShareGroupOffsets } from './92-delete-share-group-offsets.js';
import { StreamsGroupTopologyDescriptionUpdate } from './93-streams-group-topology-description-update.js';
import { UnregisterController } from './94-unregister-controller.js';

export const apisC: readonly ApiDef[] = [
  Vote,
  BeginQuorumEpoch,
  EndQuorumEpoch,
  DescribeQuorum,
  AlterPartition,
  UpdateFeatures,
  Envelope,
  FetchSnapshot,
  DescribeCluster,
  DescribeProducers,
  BrokerRegistration,
  BrokerHeartbeat,
  UnregisterBroker,
  DescribeTransactions,
  ListTransactions,
  AllocateProducerIds,
  ConsumerGroupHeartbeat,
  ConsumerGroupDescribe,
  ControllerRegistration,
  GetTelemetrySubscriptions,
  PushTelemetry,
  AssignReplicasToDirs,
  ListConfigResources,
  DescribeTopicPartitions,
  ShareGroupHeartbeat,
  ShareGroupDescribe,
  ShareFetch,
  ShareAcknowledge,
  AddRaftVoter,
  RemoveRaftVoter,
  UpdateRaftVoter,
  InitializeShareGroupState,
  ReadShareGroupState,
  WriteShareGroupState,
  DeleteShareGroupState,
  ReadShareGroupStateSummary,
  StreamsGroupHeartbeat,
  StreamsGroupDescribe,
  DescribeShareGroupOffsets,
  AlterShareGroupOffsets,
  DeleteShareGroupOffsets,
  StreamsGroupTopologyDescriptionUpdate,
  UnregisterController,
];
