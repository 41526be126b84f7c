/** API keys 0-23. */
import type { ApiDef } from '../schema.js';
import { Produce } from './00-produce.js';
import { Fetch } from './01-fetch.js';
import { ListOffsets } from './02-list-offsets.js';
import { Metadata } from './03-metadata.js';
import { OffsetCommit } from './08-offset-commit.js';
import { OffsetFetch } from './09-offset-fetch.js';
import { FindCoordinator } from './10-find-coordinator.js';
import { JoinGroup } from './11-join-group.js';
import { Heartbeat } from './12-heartbeat.js';
import { LeaveGroup } from './13-leave-group.js';
import { SyncGroup } from './14-sync-group.js';
import { DescribeGroups } from './15-describe-groups.js';
import { ListGroups } from './16-list-groups.js';
import { SaslHandshake } from './17-sasl-handshake.js';
import { ApiVersions } from './18-api-versions.js';
import { CreateTopics } from './19-create-topics.js';
import { DeleteTopics } from './20-delete-topics.js';
import { DeleteRecords } from './21-delete-records.js';
import { InitProducerId } from './22-init-producer-id.js';
import { OffsetForLeaderEpoch } from './23-offset-for-leader-epoch.js';

export const apisA: readonly ApiDef[] = [
  Produce,
  Fetch,
  ListOffsets,
  Metadata,
  OffsetCommit,
  OffsetFetch,
  FindCoordinator,
  JoinGroup,
  Heartbeat,
  LeaveGroup,
  SyncGroup,
  DescribeGroups,
  ListGroups,
  SaslHandshake,
  ApiVersions,
  CreateTopics,
  DeleteTopics,
  DeleteRecords,
  InitProducerId,
  OffsetForLeaderEpoch,
];
