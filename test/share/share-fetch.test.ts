/**
 * ShareFetch (78) and ShareAcknowledge (79) over the wire against a real
 * node (startBroker), at every advertised version. Proves Kafka's top-level
 * checks (null group id, empty member id, a renew-only fetch with non-zero
 * limits, session epochs: SHARE_SESSION_NOT_FOUND,
 * INVALID_SHARE_SESSION_EPOCH, acknowledgements in an opening request,
 * acknowledging at epoch 0); that a member acquires records with a delivery
 * count and the acquisition lock timeout, that a second member does not get
 * them while they are held, that the holder's RELEASE gives them to the
 * other member with delivery count 2, ACCEPT moves the share-partition
 * start offset past them (DescribeShareGroupOffsets-free: read from the
 * share partition's persisted state after a restart), invalid acknowledgement
 * batches answer INVALID_REQUEST on the partition, an unknown topic id
 * UNKNOWN_TOPIC_ID, and a member whose connection closes has its records
 * released to the others. A fetch with nothing to acquire waits until a
 * produce makes records acquirable.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, type RunningBroker } from '../../src/node/embedded.js';
import { silentLogger } from '../../src/common/logger.js';
import type { Partial, RequestOf } from '../../src/protocol/schema.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { FindCoordinator } from '../../src/protocol/schemas/10-find-coordinator.js';
import { ShareGroupHeartbeat } from '../../src/protocol/schemas/76-share-group-heartbeat.js';
import { ShareFetch } from '../../src/protocol/schemas/78-share-fetch.js';
import { ShareAcknowledge } from '../../src/protocol/schemas/79-share-acknowledge.js';
import { iterateBatches } from '../../src/protocol/records/batch.js';
import { Producer } from '../../src/client/producer.js';
import { WireClient, call } from '../server/wire-client.js';

async function start(dir: string): Promise<RunningBroker> {
  return startBroker({
    config: {
      'log.dirs': dir,
      'node.id': 1,
      'offsets.topic.replication.factor': 1,
      'offsets.topic.num.partitions': 3,
      'share.coordinator.state.topic.replication.factor': 1,
      'share.coordinator.state.topic.num.partitions': 3,
      'group.share.min.record.lock.duration.ms': 1000,
      'group.share.record.lock.duration.ms': 15000,
    },
    logger: silentLogger,
  });
}

async function produce(bootstrapServers: string, topic: string, values: readonly string[]): Promise<void> {
  const producer = new Producer({ bootstrapServers, acks: -1, lingerMs: 0 });
  try {
    await Promise.all(values.map((value) => producer.send({ topic, value, partition: 0 })));
  } finally {
    await producer.close();
  }
}

/** Joins the share group and heartbeats until the member is assigned `topicId` partition 0; returns its member id. */
async function joinShareGroup(client: WireClient, group: string, topic: string, topicId: string, memberId: string): Promise<string> {
  let epoch = 0;
  for (let attempt = 0; attempt < 50; attempt++) {
    const response = await call(client, ShareGroupHeartbeat, 1, { groupId: group, memberId, memberEpoch: epoch, rackId: null, subscribedTopicNames: epoch === 0 ? [topic] : null });
    assert.equal(response.errorCode, ErrorCode.NONE, `heartbeat: ${response.errorMessage}`);
    epoch = response.memberEpoch;
    const assigned = response.assignment?.topicPartitions.some((tp) => tp.topicId === topicId && tp.partitions.includes(0)) ?? false;
    if (assigned) return memberId;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`member ${memberId} was never assigned ${topic}-0`);
}

const fetchBody = (group: string, memberId: string, epoch: number, topicId: string, extra: Partial<RequestOf<typeof ShareFetch>> = {}) => ({
  groupId: group,
  memberId,
  shareSessionEpoch: epoch,
  maxWaitMs: 0,
  minBytes: 1,
  maxBytes: 1 << 20,
  maxRecords: 500,
  batchSize: 500,
  shareAcquireMode: 0,
  isRenewAck: false,
  topics: [{ topicId, partitions: [{ partitionIndex: 0, partitionMaxBytes: 1 << 20, acknowledgementBatches: [] }] }],
  forgottenTopicsData: [],
  ...extra,
});

function offsetsIn(records: Buffer | null): number[] {
  const offsets: number[] = [];
  for (const { header } of iterateBatches(records ?? Buffer.alloc(0))) for (let offset = header.baseOffset; offset <= header.lastOffset; offset++) offsets.push(offset);
  return offsets;
}

test('ShareFetch and ShareAcknowledge: top-level checks, session epochs, acquire, release, accept, over the wire', { timeout: 120_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'spool-share-fetch-'));
  const running = await start(dir);
  const clients: WireClient[] = [];
  try {
    const [created] = await running.broker.controller.createTopics([{ name: 'jobs', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], { validateOnly: false });
    const topicId = created!.topicId;
    const a = await WireClient.connect(running.bootstrapServers);
    const b = await WireClient.connect(running.bootstrapServers);
    clients.push(a, b);
    for (const version of [1, 2]) {
      const noGroup = await call(a, ShareFetch, version, fetchBody('g', 'm', 0, topicId, { groupId: null }));
      assert.deepEqual([noGroup.errorCode, noGroup.errorMessage], [ErrorCode.INVALID_REQUEST, 'Invalid group id in the request.']);
      const noMember = await call(a, ShareFetch, version, fetchBody('g', '', 0, topicId));
      assert.deepEqual([noMember.errorCode, noMember.errorMessage], [ErrorCode.INVALID_REQUEST, 'Invalid member id in the request.']);
      const noSession = await call(a, ShareFetch, version, fetchBody('g', 'nobody', 3, topicId));
      assert.equal(noSession.errorCode, ErrorCode.SHARE_SESSION_NOT_FOUND);
      const ackAtZero = await call(a, ShareAcknowledge, version, { groupId: 'g', memberId: 'nobody', shareSessionEpoch: 0, isRenewAck: false, topics: [] });
      assert.equal(ackAtZero.errorCode, ErrorCode.INVALID_SHARE_SESSION_EPOCH);
    }
    const renew = await call(a, ShareFetch, 2, fetchBody('g', 'm', 1, topicId, { isRenewAck: true }));
    assert.deepEqual([renew.errorCode, renew.errorMessage], [ErrorCode.INVALID_REQUEST, 'maxBytes must be set to 0, minBytes must be set to 0, maxRecords must be set to 0, if isRenewAck is true.']);

    const group = 'workers';
    // FindCoordinator creates __consumer_offsets, where the share group lives.
    const coordinator = await call(a, FindCoordinator, 6, { keyType: 0, coordinatorKeys: [group] });
    assert.equal(coordinator.coordinators[0]!.errorCode, ErrorCode.NONE);
    const memberA = await joinShareGroup(a, group, 'jobs', topicId, 'member-a-uuid-000000');
    const memberB = await joinShareGroup(b, group, 'jobs', topicId, 'member-b-uuid-000000');
    // The group starts at the latest offset: open A's session (which loads the share partition) before producing.
    const opening = await call(a, ShareFetch, 2, fetchBody(group, memberA, 0, topicId));
    assert.equal(opening.errorCode, ErrorCode.NONE);
    assert.ok(opening.acquisitionLockTimeoutMs > 0);
    const withAcks = await call(b, ShareFetch, 2, fetchBody(group, memberB, 0, topicId, {
      topics: [{ topicId, partitions: [{ partitionIndex: 0, partitionMaxBytes: 0, acknowledgementBatches: [{ firstOffset: 0, lastOffset: 0, acknowledgeTypes: [1] }] }] }],
    }));
    assert.equal(withAcks.errorCode, ErrorCode.INVALID_REQUEST, 'acknowledgements in an opening request');

    // A waits (long poll) until the produce makes records acquirable.
    const waiting = call(a, ShareFetch, 2, fetchBody(group, memberA, 1, topicId, { maxWaitMs: 30_000 }));
    await produce(running.bootstrapServers, 'jobs', ['r0', 'r1', 'r2']);
    const first = await waiting;
    assert.equal(first.errorCode, ErrorCode.NONE);
    const partA = first.responses[0]!.partitions[0]!;
    assert.equal(partA.errorCode, ErrorCode.NONE);
    assert.deepEqual(partA.acquiredRecords, [{ firstOffset: 0, lastOffset: 2, deliveryCount: 1 }]);
    assert.deepEqual(offsetsIn(partA.records), [0, 1, 2]);

    // B's session sees nothing to acquire while A holds the records.
    const bOpen = await call(b, ShareFetch, 2, fetchBody(group, memberB, 0, topicId));
    assert.deepEqual(bOpen.responses[0]?.partitions[0]?.acquiredRecords ?? [], []);

    // Invalid batches (first > last) answer INVALID_REQUEST on the partition; unknown topic ids UNKNOWN_TOPIC_ID.
    const invalid = await call(a, ShareAcknowledge, 2, {
      groupId: group, memberId: memberA, shareSessionEpoch: 2, isRenewAck: false,
      topics: [
        { topicId, partitions: [{ partitionIndex: 0, acknowledgementBatches: [{ firstOffset: 2, lastOffset: 1, acknowledgeTypes: [1] }] }] },
        { topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', partitions: [{ partitionIndex: 0, acknowledgementBatches: [{ firstOffset: 0, lastOffset: 0, acknowledgeTypes: [1] }] }] },
      ],
    });
    assert.equal(invalid.errorCode, ErrorCode.NONE);
    const errors = new Map(invalid.responses.map((topic) => [topic.topicId, topic.partitions[0]!.errorCode]));
    assert.equal(errors.get(topicId), ErrorCode.INVALID_REQUEST);
    assert.equal(errors.get('AAAAAAAAAAAAAAAAAAAAAQ'), ErrorCode.UNKNOWN_TOPIC_ID);
    const staleEpoch = await call(a, ShareAcknowledge, 2, { groupId: group, memberId: memberA, shareSessionEpoch: 2, isRenewAck: false, topics: [] });
    assert.equal(staleEpoch.errorCode, ErrorCode.INVALID_SHARE_SESSION_EPOCH);

    // A accepts offset 0 and releases 1-2 (one type per offset); B then acquires 1-2 with delivery count 2.
    const acked = await call(a, ShareAcknowledge, 2, {
      groupId: group, memberId: memberA, shareSessionEpoch: 3, isRenewAck: false,
      topics: [{ topicId, partitions: [{ partitionIndex: 0, acknowledgementBatches: [{ firstOffset: 0, lastOffset: 2, acknowledgeTypes: [1, 2, 2] }] }] }],
    });
    assert.equal(acked.responses[0]!.partitions[0]!.errorCode, ErrorCode.NONE);
    const bSecond = await call(b, ShareFetch, 2, fetchBody(group, memberB, 1, topicId, { maxWaitMs: 10_000 }));
    assert.deepEqual(bSecond.responses[0]!.partitions[0]!.acquiredRecords, [{ firstOffset: 1, lastOffset: 2, deliveryCount: 2 }]);

    // B's connection closes while it holds 1-2: they go back to A with delivery count 3.
    b.close();
    clients.splice(clients.indexOf(b), 1);
    const aAgain = await call(a, ShareFetch, 2, fetchBody(group, memberA, 4, topicId, { maxWaitMs: 10_000 }));
    assert.deepEqual(aAgain.responses[0]!.partitions[0]!.acquiredRecords, [{ firstOffset: 1, lastOffset: 2, deliveryCount: 3 }]);
    const accepted = await call(a, ShareFetch, 2, fetchBody(group, memberA, 5, topicId, {
      topics: [{ topicId, partitions: [{ partitionIndex: 0, partitionMaxBytes: 0, acknowledgementBatches: [{ firstOffset: 1, lastOffset: 2, acknowledgeTypes: [1] }] }] }],
    }));
    assert.equal(accepted.responses[0]!.partitions[0]!.acknowledgeErrorCode, ErrorCode.NONE);
    const sharePartition = running.broker.sharePartitionManager.sharePartition({ groupId: group, topicId, partition: 0 });
    assert.equal(sharePartition?.startOffset, 3, 'every record acknowledged: the share-partition start offset is past them');
  } finally {
    for (const client of clients) client.close();
    await running.stop();
    await rm(dir, { recursive: true, force: true });
  }
});

/** Polls for a condition the broker reaches on its own (a metadata image published), for at most `attempts` × 20 ms. */
async function until(condition: () => boolean, what: string, attempts = 500): Promise<void> {
  for (let i = 0; i < attempts && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.ok(condition(), what);
}

test('ShareFetch counts against consumer_byte_rate as Kafka: over it, an answer without partitions and a throttle time; the records stay acquired', { timeout: 120_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'spool-share-quota-'));
  const running = await start(dir);
  const clients: WireClient[] = [];
  try {
    const [created] = await running.broker.controller.createTopics([{ name: 'quota-jobs', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], { validateOnly: false });
    const topicId = created!.topicId;
    const a = await WireClient.connect(running.bootstrapServers);
    const b = await WireClient.connect(running.bootstrapServers);
    clients.push(a, b);
    const group = 'quota-workers';
    assert.equal((await call(a, FindCoordinator, 6, { keyType: 0, coordinatorKeys: [group] })).coordinators[0]!.errorCode, ErrorCode.NONE);
    const memberA = await joinShareGroup(a, group, 'quota-jobs', topicId, 'member-qa-uuid-00000');
    const memberB = await joinShareGroup(b, group, 'quota-jobs', topicId, 'member-qb-uuid-00000');
    for (const [client, member] of [[a, memberA], [b, memberB]] as const) assert.equal((await call(client, ShareFetch, 2, fetchBody(group, member, 0, topicId))).errorCode, ErrorCode.NONE);

    // The wire client's id, at 1 byte/s: any records take its rate over the bound.
    const [quota] = await running.broker.controller.alterClientQuotas([{ entity: [{ entityType: 'client-id', entityName: 'spool-test' }], ops: [{ key: 'consumer_byte_rate', value: 1, remove: false }] }], { validateOnly: false });
    assert.equal(quota?.errorCode, ErrorCode.NONE);
    const fetchQuota = running.broker.brokerServer!.clientQuotas.fetch;
    await until(() => fetchQuota.quotasEnabled, 'the broker has the quota');

    const waiting = call(a, ShareFetch, 2, fetchBody(group, memberA, 1, topicId, { maxWaitMs: 30_000 }));
    await produce(running.bootstrapServers, 'quota-jobs', ['q0', 'q1', 'q2']);
    const throttled = await waiting;
    assert.equal(throttled.errorCode, ErrorCode.NONE);
    assert.ok(throttled.throttleTimeMs > 0, 'over consumer_byte_rate');
    assert.deepEqual(throttled.responses, [], 'no partitions in a throttled answer');
    assert.ok(throttled.acquisitionLockTimeoutMs > 0);
    // As in Kafka, the throttled fetch acquired the records for A: B finds none to acquire until A's lock times out.
    const other = await call(b, ShareFetch, 2, fetchBody(group, memberB, 1, topicId));
    assert.equal(other.throttleTimeMs, 0, 'nothing fetched, nothing counted: the throttled bytes were taken back');
    assert.deepEqual(other.responses[0]?.partitions[0]?.acquiredRecords ?? [], []);
  } finally {
    for (const client of clients) client.close();
    await running.stop();
    await rm(dir, { recursive: true, force: true });
  }
});
