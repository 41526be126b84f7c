/**
 * Every API handler a node serves, one file per API key (STYLE.md §2), in
 * three groups by the roles that serve them: APIs both roles serve (each
 * node serves them on the listeners of its roles), the controller's own,
 * and the broker's own. ApiVersions advertises exactly what a listener's
 * role serves.
 */
import type { ApiHandler } from '../handler.js';
import type { ApiContext, ControllerApiContext } from '../api-context.js';
import { apiVersionsHandler } from './18-api-versions.js';
import { saslHandshakeHandler } from './17-sasl-handshake.js';
import { saslAuthenticateHandler } from './36-sasl-authenticate.js';
import { describeClientQuotasHandler } from './48-describe-client-quotas.js';
import { alterClientQuotasHandler } from './49-alter-client-quotas.js';
import { updateFeaturesHandler } from './57-update-features.js';
import { describeUserScramCredentialsHandler } from './50-describe-user-scram-credentials.js';
import { alterUserScramCredentialsHandler } from './51-alter-user-scram-credentials.js';
import { metadataHandler } from './03-metadata.js';
import { createTopicsHandler } from './19-create-topics.js';
import { deleteTopicsHandler } from './20-delete-topics.js';
import { describeConfigsHandler } from './32-describe-configs.js';
import { alterConfigsHandler } from './33-alter-configs.js';
import { createPartitionsHandler } from './37-create-partitions.js';
import { electLeadersHandler } from './43-elect-leaders.js';
import { alterPartitionReassignmentsHandler } from './45-alter-partition-reassignments.js';
import { listPartitionReassignmentsHandler } from './46-list-partition-reassignments.js';
import { incrementalAlterConfigsHandler } from './44-incremental-alter-configs.js';
import { describeClusterHandler } from './60-describe-cluster.js';
import { describeTopicPartitionsHandler } from './75-describe-topic-partitions.js';
import { produceHandler } from './00-produce.js';
import { fetchHandler } from './01-fetch.js';
import { listOffsetsHandler } from './02-list-offsets.js';
import { deleteRecordsHandler } from './21-delete-records.js';
import { initProducerIdHandler } from './22-init-producer-id.js';
import { addPartitionsToTxnHandler } from './24-add-partitions-to-txn.js';
import { addOffsetsToTxnHandler } from './25-add-offsets-to-txn.js';
import { endTxnHandler } from './26-end-txn.js';
import { writeTxnMarkersHandler } from './27-write-txn-markers.js';
import { txnOffsetCommitHandler } from './28-txn-offset-commit.js';
import { describeTransactionsHandler } from './65-describe-transactions.js';
import { listTransactionsHandler } from './66-list-transactions.js';
import { offsetForLeaderEpochHandler } from './23-offset-for-leader-epoch.js';
import { describeLogDirsHandler } from './35-describe-log-dirs.js';
import { describeProducersHandler } from './61-describe-producers.js';
import { offsetCommitHandler } from './08-offset-commit.js';
import { offsetFetchHandler } from './09-offset-fetch.js';
import { findCoordinatorHandler } from './10-find-coordinator.js';
import { joinGroupHandler } from './11-join-group.js';
import { heartbeatHandler } from './12-heartbeat.js';
import { leaveGroupHandler } from './13-leave-group.js';
import { syncGroupHandler } from './14-sync-group.js';
import { describeGroupsHandler } from './15-describe-groups.js';
import { listGroupsHandler } from './16-list-groups.js';
import { deleteGroupsHandler } from './42-delete-groups.js';
import { offsetDeleteHandler } from './47-offset-delete.js';
import { consumerGroupHeartbeatHandler } from './68-consumer-group-heartbeat.js';
import { consumerGroupDescribeHandler } from './69-consumer-group-describe.js';
import { shareGroupHeartbeatHandler } from './76-share-group-heartbeat.js';
import { shareGroupDescribeHandler } from './77-share-group-describe.js';
import { describeShareGroupOffsetsHandler } from './90-describe-share-group-offsets.js';
import { alterShareGroupOffsetsHandler } from './91-alter-share-group-offsets.js';
import { deleteShareGroupOffsetsHandler } from './92-delete-share-group-offsets.js';
import { shareFetchHandler } from './78-share-fetch.js';
import { shareAcknowledgeHandler } from './79-share-acknowledge.js';
import { brokerRegistrationHandler } from './62-broker-registration.js';
import { brokerHeartbeatHandler } from './63-broker-heartbeat.js';
import { allocateProducerIdsHandler } from './67-allocate-producer-ids.js';
import { alterPartitionHandler } from './56-alter-partition.js';
import { describeAclsHandler } from './29-describe-acls.js';
import { createAclsHandler } from './30-create-acls.js';
import { deleteAclsHandler } from './31-delete-acls.js';
import { unregisterBrokerHandler } from './64-unregister-broker.js';
import { controllerRegistrationHandler } from './70-controller-registration.js';
import { envelopeHandler } from './58-envelope.js';
import { metadataLogFetchHandler } from './01-fetch-metadata-log.js';
import { voteHandler } from './52-vote.js';
import { beginQuorumEpochHandler } from './53-begin-quorum-epoch.js';
import { endQuorumEpochHandler } from './54-end-quorum-epoch.js';
import { describeQuorumHandler } from './55-describe-quorum.js';
import { addRaftVoterHandler } from './80-add-raft-voter.js';
import { removeRaftVoterHandler } from './81-remove-raft-voter.js';
import { updateRaftVoterHandler } from './82-update-raft-voter.js';
import { fetchSnapshotHandler } from './59-fetch-snapshot.js';
import { initializeShareGroupStateHandler } from './83-initialize-share-group-state.js';
import { readShareGroupStateHandler } from './84-read-share-group-state.js';
import { writeShareGroupStateHandler } from './85-write-share-group-state.js';
import { deleteShareGroupStateHandler } from './86-delete-share-group-state.js';
import { readShareGroupStateSummaryHandler } from './87-read-share-group-state-summary.js';

/** APIs both roles serve: ApiVersions, SASL, topic and config admin, reassignments, DescribeCluster, UnregisterBroker, SCRAM credentials, client quotas, ACLs. */
export function sharedHandlers(node: ControllerApiContext): ApiHandler[] {
  return [
    apiVersionsHandler(node),
    saslHandshakeHandler(),
    saslAuthenticateHandler(),
    createTopicsHandler(node),
    deleteTopicsHandler(node),
    describeConfigsHandler(node),
    alterConfigsHandler(node),
    createPartitionsHandler(node),
    electLeadersHandler(node),
    incrementalAlterConfigsHandler(node),
    alterPartitionReassignmentsHandler(node),
    listPartitionReassignmentsHandler(node),
    describeClusterHandler(node),
    unregisterBrokerHandler(node),
    describeUserScramCredentialsHandler(node),
    alterUserScramCredentialsHandler(node),
    alterClientQuotasHandler(node),
    updateFeaturesHandler(node),
    describeQuorumHandler(node),
    describeAclsHandler(node),
    createAclsHandler(node),
    deleteAclsHandler(node),
  ] as ApiHandler[];
}

/** The controller's own APIs (what brokers send it), and KRaft's RPCs between the quorum's replicas. */
export function controllerHandlers(node: ControllerApiContext): ApiHandler[] {
  return [
    envelopeHandler(node),
    brokerRegistrationHandler(node),
    brokerHeartbeatHandler(node),
    allocateProducerIdsHandler(node),
    controllerRegistrationHandler(node),
    alterPartitionHandler(node),
    metadataLogFetchHandler(node),
    voteHandler(node),
    beginQuorumEpochHandler(node),
    endQuorumEpochHandler(node),
    fetchSnapshotHandler(node),
    addRaftVoterHandler(node),
    removeRaftVoterHandler(node),
    updateRaftVoterHandler(node),
  ] as ApiHandler[];
}

/** The broker's own APIs: metadata, the data plane, groups. */
export function brokerHandlers(broker: ApiContext): ApiHandler[] {
  return [
    metadataHandler(broker),
    describeTopicPartitionsHandler(broker),
    produceHandler(broker),
    fetchHandler(broker),
    listOffsetsHandler(broker),
    deleteRecordsHandler(broker),
    initProducerIdHandler(broker),
    addPartitionsToTxnHandler(broker),
    addOffsetsToTxnHandler(broker),
    endTxnHandler(broker),
    writeTxnMarkersHandler(broker),
    txnOffsetCommitHandler(broker),
    describeTransactionsHandler(broker),
    listTransactionsHandler(broker),
    offsetForLeaderEpochHandler(broker),
    describeLogDirsHandler(broker),
    describeProducersHandler(broker),
    describeClientQuotasHandler(broker),
    offsetCommitHandler(broker),
    offsetFetchHandler(broker),
    findCoordinatorHandler(broker),
    joinGroupHandler(broker),
    heartbeatHandler(broker),
    leaveGroupHandler(broker),
    syncGroupHandler(broker),
    describeGroupsHandler(broker),
    listGroupsHandler(broker),
    deleteGroupsHandler(broker),
    offsetDeleteHandler(broker),
    consumerGroupHeartbeatHandler(broker),
    consumerGroupDescribeHandler(broker),
    initializeShareGroupStateHandler(broker),
    readShareGroupStateHandler(broker),
    writeShareGroupStateHandler(broker),
    deleteShareGroupStateHandler(broker),
    readShareGroupStateSummaryHandler(broker),
    shareGroupHeartbeatHandler(broker),
    shareGroupDescribeHandler(broker),
    describeShareGroupOffsetsHandler(broker),
    alterShareGroupOffsetsHandler(broker),
    deleteShareGroupOffsetsHandler(broker),
    shareFetchHandler(broker),
    shareAcknowledgeHandler(broker),
  ] as ApiHandler[];
}
