/**
 * Share groups end to end: a broker from startBroker(), driven over TCP by
 * Spool's own encoder. Proves: ApiVersions advertises ShareGroupHeartbeat
 * and ShareGroupDescribe at v1, 90 at 0-1, 91-92 at 0, and share.version
 * 0-1 supported and 1 finalized on a new cluster; a share consumer joins
 * with ShareGroupHeartbeat, gets every partition once the group coordinator
 * initialized their share state, a second member shares the work; the group
 * is described (ShareGroupDescribe), listed with type "share" (ListGroups
 * v5), its start offsets are described (DescribeShareGroupOffsets, through
 * the node's persister); it leaves and is deleted (DeleteGroups). The
 * handlers answer UNSUPPORTED_VERSION when share.version is 0.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, type RunningBroker } from '../../src/node/embedded.js';
import { silentLogger } from '../../src/common/logger.js';
import type { ResponseOf } from '../../src/protocol/schema.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiVersions } from '../../src/protocol/schemas/18-api-versions.js';
import { FindCoordinator } from '../../src/protocol/schemas/10-find-coordinator.js';
import { ListGroups } from '../../src/protocol/schemas/16-list-groups.js';
import { DeleteGroups } from '../../src/protocol/schemas/42-delete-groups.js';
import { ShareGroupHeartbeat } from '../../src/protocol/schemas/76-share-group-heartbeat.js';
import { ShareGroupDescribe } from '../../src/protocol/schemas/77-share-group-describe.js';
import { DescribeShareGroupOffsets } from '../../src/protocol/schemas/90-describe-share-group-offsets.js';
import { shareGroupHeartbeatHandler } from '../../src/server/apis/76-share-group-heartbeat.js';
import { deleteShareGroupOffsetsHandler } from '../../src/server/apis/92-delete-share-group-offsets.js';
import type { ApiContext } from '../../src/server/api-context.js';
import type { RequestContext } from '../../src/server/handler.js';
import { WireClient, call } from '../server/wire-client.js';

async function start(dir: string): Promise<RunningBroker> {
  return startBroker({
    config: { 'log.dirs': dir, 'node.id': 1, 'offsets.topic.replication.factor': 1, 'offsets.topic.num.partitions': 3 },
    logger: silentLogger,
  });
}

/** Heartbeats until the member holds partitions (the coordinator initializes share state after answering the join). */
async function beatUntilAssigned(running: RunningBroker, client: WireClient, memberId: string, epoch: number): Promise<ResponseOf<typeof ShareGroupHeartbeat>> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const beat = await call(client, ShareGroupHeartbeat, 1, { groupId: 'sg', memberId, memberEpoch: epoch, subscribedTopicNames: ['jobs'] });
    assert.equal(beat.errorCode, ErrorCode.NONE, beat.errorMessage ?? '');
    if ((beat.assignment?.topicPartitions.length ?? 0) > 0) return beat;
    epoch = beat.memberEpoch;
    await running.broker.groupCoordinator.shareInitializationsSettled();
  }
  assert.fail(`${memberId} got no assignment`);
}

test('a share group over the wire: advertised, joined, shared, described, listed and deleted', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'spool-share-'));
  const running = await start(dir);
  try {
    const [created] = await running.broker.controller.createTopics([{ name: 'jobs', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }], { validateOnly: false });
    const topicId = created!.topicId;
    const client = await WireClient.connect(running.bootstrapServers);
    const versions = await call(client, ApiVersions, 3, { clientSoftwareName: 'e2e', clientSoftwareVersion: '1' });
    const range = (key: number) => versions.apiKeys.filter((k) => k.apiKey === key).map((k) => [k.minVersion, k.maxVersion])[0];
    assert.deepEqual([range(76), range(77), range(90), range(91), range(92)], [[1, 1], [1, 1], [0, 1], [0, 0], [0, 0]]);
    assert.deepEqual(versions.supportedFeatures.find((f) => f.name === 'share.version'), { name: 'share.version', minVersion: 0, maxVersion: 1 });
    assert.equal(versions.finalizedFeatures.find((f) => f.name === 'share.version')?.maxVersionLevel, 1);

    await call(client, FindCoordinator, 4, { keyType: 0, coordinatorKeys: ['sg'] });
    const first = await beatUntilAssigned(running, client, 'member-1', 0);
    assert.deepEqual(first.assignment?.topicPartitions, [{ topicId, partitions: [0, 1] }]);
    assert.equal(first.heartbeatIntervalMs, 5000);
    const second = await beatUntilAssigned(running, client, 'member-2', 0);
    assert.equal(second.assignment?.topicPartitions[0]?.partitions.length, 1, 'two members, two partitions: one each');

    const described = await call(client, ShareGroupDescribe, 1, { groupIds: ['sg', 'nope'], includeAuthorizedOperations: false });
    const group = described.groups[0]!;
    assert.deepEqual([group.errorCode, group.groupState, group.assignorName, group.members.length], [0, 'Stable', 'simple', 2]);
    assert.equal(described.groups[1]!.errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
    const listed = await call(client, ListGroups, 5, { statesFilter: [], typesFilter: ['share'] });
    assert.deepEqual(listed.groups.map((g) => [g.groupId, g.groupType, g.protocolType, g.groupState]), [['sg', 'share', 'share', 'Stable']]);
    const offsets = await call(client, DescribeShareGroupOffsets, 1, { groups: [{ groupId: 'sg', topics: null }] });
    assert.equal(offsets.groups[0]!.errorCode, ErrorCode.NONE);
    assert.deepEqual(offsets.groups[0]!.topics.map((t) => [t.topicName, t.partitions.map((p) => p.partitionIndex).sort()]), [['jobs', [0, 1]]]);

    const notEmpty = await call(client, DeleteGroups, 2, { groupsNames: ['sg'] });
    assert.equal(notEmpty.results[0]!.errorCode, ErrorCode.NON_EMPTY_GROUP);
    for (const memberId of ['member-1', 'member-2']) {
      const left = await call(client, ShareGroupHeartbeat, 1, { groupId: 'sg', memberId, memberEpoch: -1 });
      assert.deepEqual([left.errorCode, left.memberEpoch], [ErrorCode.NONE, -1]);
    }
    const deleted = await call(client, DeleteGroups, 2, { groupsNames: ['sg'] });
    assert.equal(deleted.results[0]!.errorCode, ErrorCode.NONE);
    const gone = await call(client, ShareGroupDescribe, 1, { groupIds: ['sg'], includeAuthorizedOperations: false });
    assert.equal(gone.groups[0]!.errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
    client.close();
  } finally {
    await running.stop();
    await rm(dir, { recursive: true, force: true });
  }
});

test('with share.version 0 finalized, the share group APIs answer UNSUPPORTED_VERSION', async () => {
  const noShare = { metadata: { image: { features: new Map([['metadata.version', 25]]) } } } as unknown as ApiContext;
  const context = { apiVersion: 1 } as unknown as RequestContext;
  const beat = await shareGroupHeartbeatHandler(noShare).handle({ groupId: 'sg', memberId: 'm', memberEpoch: 0, rackId: null, subscribedTopicNames: ['t'] }, context);
  assert.equal((beat as { errorCode?: number }).errorCode, ErrorCode.UNSUPPORTED_VERSION);
  const deleted = await deleteShareGroupOffsetsHandler(noShare).handle({ groupId: 'sg', topics: [] }, context);
  assert.equal((deleted as { errorCode?: number }).errorCode, ErrorCode.UNSUPPORTED_VERSION);
});
