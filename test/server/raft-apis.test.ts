/**
 * KRaft's RPCs on a real node's controller listener, at every version it
 * advertises: DescribeQuorum reports the one voter as leader with its high
 * watermark; Vote refuses another cluster (INCONSISTENT_CLUSTER_ID) and a
 * stale pre-vote (FENCED_LEADER_EPOCH), and a sitting leader grants no
 * vote; BeginQuorumEpoch and EndQuorumEpoch of an older epoch are
 * fenced; an observer's Fetch of `__cluster_metadata` gets the log's
 * batches; FetchSnapshot of an unknown snapshot is SNAPSHOT_NOT_FOUND.
 * Once the node's Raft client closed (the node stopping), each of them
 * gets its connection closed instead of an answer, as Kafka's.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { versionRange } from '../../src/protocol/apis.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { iterateBatches } from '../../src/protocol/records/batch.js';
import { Fetch } from '../../src/protocol/schemas/01-fetch.js';
import { Vote } from '../../src/protocol/schemas/52-vote.js';
import { BeginQuorumEpoch } from '../../src/protocol/schemas/53-begin-quorum-epoch.js';
import { EndQuorumEpoch } from '../../src/protocol/schemas/54-end-quorum-epoch.js';
import { DescribeQuorum } from '../../src/protocol/schemas/55-describe-quorum.js';
import { FetchSnapshot } from '../../src/protocol/schemas/59-fetch-snapshot.js';
import { startBroker } from '../../src/node/embedded.js';
import { silentLogger } from '../../src/common/logger.js';
import { WireClient, call, callOrClosed } from './wire-client.js';

const METADATA = '__cluster_metadata';
const METADATA_TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';
const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';

function versionsOf(api: Parameters<typeof versionRange>[0]): number[] {
  const { min, max } = versionRange(api);
  return Array.from({ length: max - min + 1 }, (_, i) => min + i);
}

test('KRaft RPCs are served on the controller listener at every advertised version', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spool-raft-apis-'));
  const running = await startBroker({ config: { 'log.dirs': dir }, logger: silentLogger });
  const listener = running.broker.listeners.find((l) => l.name === 'CONTROLLER')!;
  const controller = await WireClient.connect(`${listener.advertisedHost}:${listener.advertisedPort}`);
  const clusterId = running.broker.shared.clusterId;
  const epoch = running.broker.shared.raft.leaderAndEpoch.epoch;
  try {
    for (const version of versionsOf(DescribeQuorum)) {
      const described = await call(controller, DescribeQuorum, version, { topics: [{ topicName: METADATA, partitions: [{ partitionIndex: 0 }] }] });
      const partition = described.topics[0]!.partitions[0]!;
      assert.equal(partition.errorCode, ErrorCode.NONE, `v${version}`);
      assert.deepEqual([partition.leaderId, partition.leaderEpoch], [1, epoch]);
      assert.ok(partition.highWatermark > 0);
      assert.deepEqual(partition.currentVoters.map((v) => v.replicaId), [1]);
    }
    for (const version of versionsOf(Vote)) {
      const vote = (cluster: string | null, replicaEpoch: number, options: { lastOffsetEpoch: number; preVote: boolean }) =>
        call(controller, Vote, version, {
          clusterId: cluster,
          voterId: 1,
          topics: [{ topicName: METADATA, partitions: [{ partitionIndex: 0, replicaEpoch, replicaId: 2, replicaDirectoryId: ZERO_UUID, voterDirectoryId: ZERO_UUID, lastOffset: 10_000, ...options }] }],
        });
      const standard = { lastOffsetEpoch: epoch - 1, preVote: false };
      assert.equal((await vote('another-cluster', epoch, standard)).errorCode, ErrorCode.INCONSISTENT_CLUSTER_ID, `v${version}`);
      const refused = (await vote(clusterId, epoch, standard)).topics[0]!.partitions[0]!;
      assert.deepEqual([refused.errorCode, refused.voteGranted, refused.leaderId], [ErrorCode.NONE, false, 1], `v${version}: the leader of the epoch votes for no one`);
      if (version < 2) continue;
      const preVote = (await vote(clusterId, epoch, { lastOffsetEpoch: epoch, preVote: true })).topics[0]!.partitions[0]!;
      assert.deepEqual([preVote.errorCode, preVote.voteGranted], [ErrorCode.NONE, false], 'a leader grants no pre-vote');
      const stale = (await vote(clusterId, epoch - 1, { lastOffsetEpoch: epoch - 1, preVote: true })).topics[0]!.partitions[0]!;
      assert.equal(stale.errorCode, ErrorCode.FENCED_LEADER_EPOCH);
    }
    for (const version of versionsOf(BeginQuorumEpoch)) {
      const begun = await call(controller, BeginQuorumEpoch, version, {
        clusterId,
        voterId: 1,
        topics: [{ topicName: METADATA, partitions: [{ partitionIndex: 0, voterDirectoryId: ZERO_UUID, leaderId: 2, leaderEpoch: epoch - 1 }] }],
        leaderEndpoints: [],
      });
      assert.equal(begun.topics[0]!.partitions[0]!.errorCode, ErrorCode.FENCED_LEADER_EPOCH, `v${version}`);
    }
    for (const version of versionsOf(EndQuorumEpoch)) {
      const ended = await call(controller, EndQuorumEpoch, version, {
        clusterId,
        topics: [{ topicName: METADATA, partitions: [{ partitionIndex: 0, leaderId: 2, leaderEpoch: epoch - 1, preferredSuccessors: [1], preferredCandidates: [] }] }],
        leaderEndpoints: [],
      });
      assert.equal(ended.topics[0]!.partitions[0]!.errorCode, ErrorCode.FENCED_LEADER_EPOCH, `v${version}`);
    }
    for (const version of versionsOf(Fetch).filter((v) => v >= 12)) {
      const fetched = await call(controller, Fetch, version, {
        clusterId,
        replicaId: 7,
        replicaState: { replicaId: 7, replicaEpoch: -1 },
        maxWaitMs: 0,
        minBytes: 0,
        maxBytes: 1 << 20,
        topics: [{ topic: METADATA, topicId: METADATA_TOPIC_ID, partitions: [{ partition: 0, currentLeaderEpoch: epoch, fetchOffset: 0, lastFetchedEpoch: 0, logStartOffset: 0, partitionMaxBytes: 0 }] }],
        forgottenTopicsData: [],
      });
      const partition = fetched.responses[0]!.partitions[0]!;
      assert.equal(partition.errorCode, ErrorCode.NONE, `v${version}`);
      assert.deepEqual(partition.currentLeader, { leaderId: 1, leaderEpoch: epoch });
      assert.ok([...iterateBatches(partition.records!)].length > 0, `v${version}: the metadata log's batches`);
    }
    for (const version of versionsOf(FetchSnapshot)) {
      const snapshot = await call(controller, FetchSnapshot, version, {
        clusterId,
        replicaId: 7,
        maxBytes: 1 << 20,
        topics: [{ name: METADATA, partitions: [{ partition: 0, currentLeaderEpoch: epoch, snapshotId: { endOffset: 12345, epoch: 1 }, position: 0 }] }],
      });
      assert.equal(snapshot.topics[0]!.partitions[0]!.errorCode, ErrorCode.SNAPSHOT_NOT_FOUND, `v${version}`);
    }
  } finally {
    controller.close();
    await running.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a Raft RPC that reaches a node whose metadata log closed (it is stopping) gets its connection closed, not UNKNOWN_SERVER_ERROR', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spool-raft-apis-closed-'));
  const running = await startBroker({ config: { 'log.dirs': dir }, logger: silentLogger });
  const listener = running.broker.listeners.find((l) => l.name === 'CONTROLLER')!;
  const address = `${listener.advertisedHost}:${listener.advertisedPort}`;
  const clusterId = running.broker.shared.clusterId;
  const epoch = running.broker.shared.raft.leaderAndEpoch.epoch;
  const partition = { partitionIndex: 0 };
  try {
    // What node.stop() does before it closes the listeners: the Raft client closes while the controller listener serves.
    await running.broker.shared.raft.close();
    const requests: [string, (client: WireClient) => Promise<unknown>][] = [
      ['Vote', (c) => callOrClosed(c, Vote, 2, { clusterId, voterId: 1, topics: [{ topicName: METADATA, partitions: [{ ...partition, replicaEpoch: epoch + 1, replicaId: 2, replicaDirectoryId: ZERO_UUID, voterDirectoryId: ZERO_UUID, lastOffsetEpoch: epoch, lastOffset: 10_000, preVote: true }] }] })],
      ['BeginQuorumEpoch', (c) => callOrClosed(c, BeginQuorumEpoch, 1, { clusterId, voterId: 1, topics: [{ topicName: METADATA, partitions: [{ ...partition, voterDirectoryId: ZERO_UUID, leaderId: 2, leaderEpoch: epoch + 1 }] }], leaderEndpoints: [] })],
      ['EndQuorumEpoch', (c) => callOrClosed(c, EndQuorumEpoch, 1, { clusterId, topics: [{ topicName: METADATA, partitions: [{ ...partition, leaderId: 2, leaderEpoch: epoch + 1, preferredSuccessors: [], preferredCandidates: [] }] }], leaderEndpoints: [] })],
      ['Fetch', (c) => callOrClosed(c, Fetch, 17, {
        clusterId, replicaId: 7, replicaState: { replicaId: 7, replicaEpoch: -1 }, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20,
        topics: [{ topic: METADATA, topicId: METADATA_TOPIC_ID, partitions: [{ partition: 0, currentLeaderEpoch: epoch, fetchOffset: 0, lastFetchedEpoch: 0, logStartOffset: 0, partitionMaxBytes: 0 }] }],
        forgottenTopicsData: [],
      })],
      ['FetchSnapshot', (c) => callOrClosed(c, FetchSnapshot, 1, { clusterId, replicaId: 7, maxBytes: 1 << 20, topics: [{ name: METADATA, partitions: [{ partition: 0, currentLeaderEpoch: epoch, snapshotId: { endOffset: 12345, epoch: 1 }, position: 0 }] }] })],
    ];
    for (const [name, send] of requests) {
      const client = await WireClient.connect(address);
      try {
        assert.equal(await send(client), null, `${name}: answered instead of closing the connection`);
      } finally {
        client.close();
      }
    }
  } finally {
    await running.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
