/** API keys 24-51. */
import type { ApiDef } from '../schema.js';
import { AddPartitionsToTxn } from './24-add-partitions-to-txn.js';
import { AddOffsetsToTxn } from './25-add-offsets-to-txn.js';
import { EndTxn } from './26-end-txn.js';
import { WriteTxnMarkers } from './27-write-txn-markers.js';
import { TxnOffsetCommit } from './28-txn-offset-commit.js';
import { DescribeAcls } from './29-describe-acls.js';
import { CreateAcls } from './30-create-acls.js';
import { DeleteAcls } from './31-delete-acls.js';
import { DescribeConfigs } from './32-describe-configs.js';
import { AlterConfigs } from './33-alter-configs.js';
import { AlterReplicaLogDirs } from './34-alter-replica-log-dirs.js';
import { DescribeLogDirs } from './35-describe-log-dirs.js';
import { SaslAuthenticate } from './36-sasl-authenticate.js';
import { CreatePartitions } from './37-create-partitions.js';
import { CreateDelegationToken } from './38-create-delegation-token.js';
import { RenewDelegationToken } from './39-renew-delegation-token.js';
import { ExpireDelegationToken } from './40-expire-delegation-token.js';
import { DescribeDelegationToken } from './41-describe-delegation-token.js';
import { DeleteGroups } from './42-delete-groups.js';
import { ElectLeaders } from './43-elect-leaders.js';
import { IncrementalAlterConfigs } from './44-incremental-alter-configs.js';
import { AlterPartitionReassignments } from './45-alter-partition-reassignments.js';
import { ListPartitionReassignments } from './46-list-partition-reassignments.js';
import { OffsetDelete } from './47-offset-delete.js';
import { DescribeClientQuotas } from './48-describe-client-quotas.js';
import { AlterClientQuotas } from './49-alter-client-quotas.js';
import { DescribeUserScramCredentials } from './50-describe-user-scram-credentials.js';
import { AlterUserScramCredentials } from './51-alter-user-scram-credentials.js';

export const apisB: readonly ApiDef[] = [
  AddPartitionsToTxn,
  AddOffsetsToTxn,
  EndTxn,
  WriteTxnMarkers,
  TxnOffsetCommit,
  DescribeAcls,
  CreateAcls,
  DeleteAcls,
  DescribeConfigs,
  AlterConfigs,
  AlterReplicaLogDirs,
  DescribeLogDirs,
  SaslAuthenticate,
  CreatePartitions,
  CreateDelegationToken,
  RenewDelegationToken,
  ExpireDelegationToken,
  DescribeDelegationToken,
  DeleteGroups,
  ElectLeaders,
  IncrementalAlterConfigs,
  AlterPartitionReassignments,
  ListPartitionReassignments,
  OffsetDelete,
  DescribeClientQuotas,
  AlterClientQuotas,
  DescribeUserScramCredentials,
  AlterUserScramCredentials,
];
