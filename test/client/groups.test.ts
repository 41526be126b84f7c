/**
 * Consumer groups end to end against a running broker (startBroker; see
 * broker-fixture.ts; SPOOL_E2E_BOOTSTRAP points them at Apache Kafka), for
 * both group protocols (classic and KIP-848 consumer):
 * - three Spool consumers in one group over a 6-partition topic settle on
 *   two partitions each and, once settled, receive every record exactly
 *   once among them, each only from its own partitions;
 * - when one closes, the other two take over its partitions and receive the
 *   next records exactly once, with nothing delivered twice (the leaver's
 *   offsets were committed on close);
 * - a member killed with SIGKILL (a `spool consume --group` process) loses
 *   its partitions to the others once its session times out (6 s here);
 * - a static member (group.instance.id) that restarts within its session
 *   gets its partitions back without the other member rebalancing;
 * - committed offsets resume after every member restarts;
 * - two groups on the same topic each receive everything;
 * - a pattern subscription picks up the matching topics;
 * - classic cooperative-sticky: a joining member takes partitions without
 *   the first member giving up the ones it keeps;
 * - position vs committed, commitSync of explicit offsets, committed() of
 *   partitions without offsets.
 * Heartbeats are set short (500 ms) and sessions to 6 s so rebalances
 * settle quickly; the broker must allow it for the consumer protocol
 * (GROUP_TEST_BROKER_CONFIG: group.consumer.[min.]heartbeat.interval.ms=500,
 * group.consumer.[min.]session.timeout.ms=6000).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Admin } from '../../src/client/admin.js';
import { Consumer, type ConsumerOptions, type ConsumerRecord } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import type { TopicPartition } from '../../src/client/cluster.js';
import { startTestBroker, uniqueTopic, type TestBroker } from './broker-fixture.js';
import { GROUP_TEST_BROKER_CONFIG } from './group-fixture.js';


let broker: TestBroker;
let admin: Admin;

before(async () => {
  broker = await startTestBroker(GROUP_TEST_BROKER_CONFIG);
  admin = new Admin({ bootstrapServers: broker.bootstrapServers });
});

after(async () => {
  await admin?.close();
  await broker?.stop();
});

const PROTOCOLS = ['classic', 'consumer'] as const;
const SETTLE_MS = 60_000;

function consumer(groupId: string, protocol: 'classic' | 'consumer', options: Partial<ConsumerOptions> = {}): Consumer {
  return new Consumer({
    bootstrapServers: broker.bootstrapServers,
    groupId,
    groupProtocol: protocol,
    autoOffsetReset: 'earliest',
    heartbeatIntervalMs: 500,
    sessionTimeoutMs: 10_000,
    fetchMaxWaitMs: 100,
    logger: process.env.GROUPS_TEST_LOG ? (m) => console.log(groupId, m) : () => undefined,
    ...options,
  });
}

async function produce(topic: string, count: number, from = 0): Promise<void> {
  const producer = new Producer({ bootstrapServers: broker.bootstrapServers, lingerMs: 5 });
  await Promise.all(Array.from({ length: count }, (_, i) => producer.send({ topic, key: `k${from + i}`, value: `v${from + i}` })));
  await producer.close();
}

interface Collected {
  consumer: Consumer;
  records: ConsumerRecord[];
}

/** Polls every consumer together until `done` holds (or fails after SETTLE_MS of polling). */
async function pollUntil(members: Collected[], done: () => boolean, what: string): Promise<void> {
  const startMs = performance.now();
  while (!done()) {
    if (performance.now() - startMs > SETTLE_MS) {
      const state = members.map((m) => `${m.consumer.assignment().length} partitions, ${m.records.length} records`).join('; ');
      assert.fail(`${what} did not happen while polling (${state})`);
    }
    await Promise.all(members.map(async (m) => m.records.push(...await m.consumer.poll(200))));
  }
}

const key = (r: ConsumerRecord): string => `${r.partition}:${r.offset}`;
const tpKeys = (tps: readonly TopicPartition[]): string[] => tps.map((tp) => `${tp.topic}-${tp.partition}`).sort();

for (const protocol of PROTOCOLS) {
  test(`${protocol} protocol: 3 consumers share 6 partitions; every record exactly once; a closing member's partitions move to the others`, async () => {
    const topic = uniqueTopic(`groups-${protocol}`);
    const group = uniqueTopic(`group-${protocol}`);
    await admin.createTopics([{ name: topic, numPartitions: 6, replicationFactor: 1 }]);
    const members: Collected[] = [0, 1, 2].map(() => ({ consumer: consumer(group, protocol), records: [] }));
    for (const m of members) m.consumer.subscribe([topic]);
    try {
      await pollUntil(members, () => members.every((m) => m.consumer.assignment().length === 2), 'three members with two partitions each');
      const owned = members.map((m) => tpKeys(m.consumer.assignment()));
      assert.equal(new Set(owned.flat()).size, 6, 'the three assignments are disjoint and cover the topic');

      await produce(topic, 300);
      const total = (): number => members.reduce((sum, m) => sum + m.records.length, 0);
      await pollUntil(members, () => total() >= 300, 'all 300 records consumed');
      const all = members.flatMap((m) => m.records);
      assert.equal(all.length, 300);
      assert.equal(new Set(all.map(key)).size, 300, 'no record twice');
      members.forEach((m, i) => {
        for (const r of m.records) assert.ok(owned[i]!.includes(`${topic}-${r.partition}`), `member ${i} got a record of a partition it does not own`);
      });

      const leaving = members.pop()!;
      await leaving.consumer.close();
      for (const m of members) m.records = [];
      await pollUntil(members, () => members.every((m) => m.consumer.assignment().length === 3), 'the two remaining members with three partitions each');
      assert.deepEqual(tpKeys(members.flatMap((m) => m.consumer.assignment())), tpKeys([0, 1, 2, 3, 4, 5].map((partition) => ({ topic, partition }))));
      await produce(topic, 120, 300);
      await pollUntil(members, () => total() >= 120, 'the next 120 records consumed');
      const next = members.flatMap((m) => m.records);
      assert.equal(next.length, 120, 'nothing consumed twice after the hand-over');
      assert.equal(new Set(next.map(key)).size, 120);
      assert.ok(next.every((r) => Number(r.value!.toString().slice(1)) >= 300), 'no record of the first batch came again');
    } finally {
      await Promise.all(members.map((m) => m.consumer.close()));
    }
  });

  test(`${protocol} protocol: a member killed with SIGKILL loses its partitions to the others after its session timeout`, async () => {
    const topic = uniqueTopic(`kill-${protocol}`);
    const group = uniqueTopic(`kill-group-${protocol}`);
    await admin.createTopics([{ name: topic, numPartitions: 6, replicationFactor: 1 }]);
    const members: Collected[] = [0, 1].map(() => ({ consumer: consumer(group, protocol, { sessionTimeoutMs: 6000 }), records: [] }));
    for (const m of members) m.consumer.subscribe([topic]);
    const bin = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
    const child = spawn(process.execPath, [bin, 'consume', '--bootstrap-server', broker.bootstrapServers, '--topic', topic, '--group', group,
      '--consumer-property', `group.protocol=${protocol}`, '--consumer-property', 'session.timeout.ms=6000', '--consumer-property', 'heartbeat.interval.ms=500'], { stdio: 'ignore' });
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    try {
      await pollUntil(members, () => members.every((m) => m.consumer.assignment().length === 2), 'the two in-process members with two partitions each (the child holds two)');
      child.kill('SIGKILL');
      await exited;
      await pollUntil(members, () => members.every((m) => m.consumer.assignment().length === 3), 'the killed member\'s partitions moving to the other two');
      assert.equal(new Set(members.flatMap((m) => tpKeys(m.consumer.assignment()))).size, 6);
    } finally {
      child.kill('SIGKILL');
      await Promise.all(members.map((m) => m.consumer.close()));
    }
  });

  test(`${protocol} protocol: a static member restarts and gets its partitions back without a rebalance`, async () => {
    const topic = uniqueTopic(`static-${protocol}`);
    const group = uniqueTopic(`static-group-${protocol}`);
    await admin.createTopics([{ name: topic, numPartitions: 6, replicationFactor: 1 }]);
    const revokedByB: string[] = [];
    const a: Collected = { consumer: consumer(group, protocol, { groupInstanceId: 'instance-a' }), records: [] };
    const b: Collected = { consumer: consumer(group, protocol, { groupInstanceId: 'instance-b' }), records: [] };
    a.consumer.subscribe([topic]);
    b.consumer.subscribe([topic], { onPartitionsRevoked: (tps) => { revokedByB.push(...tpKeys(tps)); } });
    let again: Collected | null = null;
    try {
      await pollUntil([a, b], () => a.consumer.assignment().length === 3 && b.consumer.assignment().length === 3, 'two static members with three partitions each');
      const ofA = tpKeys(a.consumer.assignment());
      const ofB = tpKeys(b.consumer.assignment());
      revokedByB.length = 0;
      await a.consumer.close();
      again = { consumer: consumer(group, protocol, { groupInstanceId: 'instance-a' }), records: [] };
      again.consumer.subscribe([topic]);
      await pollUntil([again, b], () => again!.consumer.assignment().length === 3, 'the restarted static member with its partitions');
      assert.deepEqual(tpKeys(again.consumer.assignment()), ofA, 'the same partitions as before the restart');
      assert.deepEqual(tpKeys(b.consumer.assignment()), ofB);
      assert.deepEqual(revokedByB, [], 'the other member never gave anything up');
    } finally {
      await Promise.all([a.consumer.close(), b.consumer.close(), again?.consumer.close()]);
    }
  });

  test(`${protocol} protocol: committed offsets resume after all members restart`, async () => {
    const topic = uniqueTopic(`resume-${protocol}`);
    const group = uniqueTopic(`resume-group-${protocol}`);
    await admin.createTopics([{ name: topic, numPartitions: 3, replicationFactor: 1 }]);
    await produce(topic, 90);
    const first: Collected[] = [0, 1].map(() => ({ consumer: consumer(group, protocol, { enableAutoCommit: false }), records: [] }));
    for (const m of first) m.consumer.subscribe([topic]);
    try {
      await pollUntil(first, () => first.reduce((sum, m) => sum + m.records.length, 0) >= 90, 'the first 90 records');
      for (const m of first) await m.consumer.commitSync();
    } finally {
      await Promise.all(first.map((m) => m.consumer.close()));
    }
    await produce(topic, 30, 90);
    const again: Collected[] = [{ consumer: consumer(group, protocol), records: [] }];
    again[0]!.consumer.subscribe([topic]);
    try {
      await pollUntil(again, () => again[0]!.records.length >= 30, 'the 30 new records');
      const values = again[0]!.records.map((r) => Number(r.value!.toString().slice(1))).sort((a, b) => a - b);
      assert.deepEqual(values, Array.from({ length: 30 }, (_, i) => 90 + i), 'only the records after the committed offsets');
      const tps = [0, 1, 2].map((partition) => ({ topic, partition }));
      await again[0]!.consumer.commitSync();
      const committed = await again[0]!.consumer.committed(tps);
      const ends = await admin.listOffsets(tps.map((tp) => ({ ...tp, spec: 'latest' as const })));
      assert.deepEqual(committed.map((c) => c?.offset), ends.map((e) => e.offset), 'committed = position = log end');
      for (const tp of tps) assert.equal(await again[0]!.consumer.position(tp), ends[tp.partition]!.offset);
    } finally {
      await again[0]!.consumer.close();
    }
  });

  test(`${protocol} protocol: two groups on the same topic each receive everything; a pattern subscription finds its topics`, async () => {
    const prefix = uniqueTopic(`pubsub-${protocol}`);
    const topics = [`${prefix}-a`, `${prefix}-b`];
    await admin.createTopics(topics.map((name) => ({ name, numPartitions: 2, replicationFactor: 1 })));
    for (const topic of topics) await produce(topic, 40);
    const groups: Collected[] = [
      { consumer: consumer(uniqueTopic('pubsub-1'), protocol), records: [] },
      { consumer: consumer(uniqueTopic('pubsub-2'), protocol), records: [] },
    ];
    groups[0]!.consumer.subscribe(topics);
    groups[1]!.consumer.subscribe(new RegExp(`^${prefix.replace(/[-]/g, '\\-')}-.*`));
    try {
      await pollUntil(groups, () => groups.every((g) => g.records.length >= 80), 'both groups reading all 80 records');
      for (const g of groups) {
        assert.equal(g.records.length, 80);
        assert.equal(new Set(g.records.map((r) => `${r.topic}:${key(r)}`)).size, 80);
      }
      assert.deepEqual(groups[1]!.consumer.subscription(), topics);
    } finally {
      await Promise.all(groups.map((g) => g.consumer.close()));
    }
  });
}

test('classic cooperative-sticky: a joining member gets partitions while the first keeps the rest without revoking them', async () => {
  const topic = uniqueTopic('coop');
  const group = uniqueTopic('coop-group');
  await admin.createTopics([{ name: topic, numPartitions: 4, replicationFactor: 1 }]);
  const revokedByFirst: string[][] = [];
  const first: Collected = { consumer: consumer(group, 'classic', { partitionAssignmentStrategy: ['cooperative-sticky'] }), records: [] };
  first.consumer.subscribe([topic], { onPartitionsRevoked: (tps) => { revokedByFirst.push(tpKeys(tps)); } });
  const second: Collected = { consumer: consumer(group, 'classic', { partitionAssignmentStrategy: ['cooperative-sticky'] }), records: [] };
  try {
    await pollUntil([first], () => first.consumer.assignment().length === 4, 'the first member owning all 4 partitions');
    second.consumer.subscribe([topic]);
    await pollUntil([first, second], () => first.consumer.assignment().length === 2 && second.consumer.assignment().length === 2, 'two partitions each');
    const kept = tpKeys(first.consumer.assignment());
    assert.equal(revokedByFirst.length, 1, 'one revocation, of the moving partitions only');
    assert.equal(revokedByFirst[0]!.length, 2);
    assert.ok(revokedByFirst[0]!.every((tp) => !kept.includes(tp)), 'kept partitions were never revoked');
  } finally {
    await Promise.all([first.consumer.close(), second.consumer.close()]);
  }
});

test('position vs committed: commitSync of explicit offsets; committed() is null where nothing was committed', async () => {
  const topic = uniqueTopic('positions');
  const group = uniqueTopic('positions-group');
  await admin.createTopics([{ name: topic, numPartitions: 2, replicationFactor: 1 }]);
  await produce(topic, 20);
  const member: Collected = { consumer: consumer(group, 'classic', { enableAutoCommit: false, maxPollRecords: 5 }), records: [] };
  member.consumer.subscribe([topic]);
  try {
    await pollUntil([member], () => member.records.length >= 5, 'a first batch');
    const tp = { topic, partition: member.records[0]!.partition };
    const position = await member.consumer.position(tp);
    assert.ok(position > 0);
    assert.deepEqual(await member.consumer.committed([tp, { topic, partition: 1 - tp.partition }]), [null, null]);
    await member.consumer.commitSync([{ ...tp, offset: 3, metadata: 'checkpoint' }]);
    const [committed] = await member.consumer.committed([tp]);
    assert.equal(committed!.offset, 3);
    assert.equal(committed!.metadata, 'checkpoint');
    assert.equal(await member.consumer.position(tp), position, 'committing does not move the position');
  } finally {
    await member.consumer.close();
  }
});
