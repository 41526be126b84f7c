/**
 * The classic protocol's client-side assignors and the ConsumerProtocol
 * bytes, against results captured from kafka-clients 4.4.0
 * (fixtures/assignor-goldens.jsonl, made by java/goldens.sh): for every
 * seeded random group, range, roundrobin and cooperative-sticky (over five
 * rebalance rounds with members joining, leaving, resubscribing and
 * claiming stale generations) give each member exactly the partitions
 * Kafka's assignor gives it; subscriptions and assignments encode to
 * Kafka's bytes at every version and decode back. Also the properties the
 * assignors promise on their own: every subscribed partition assigned
 * once, balance, and cooperative stickiness.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { RangeAssignor, RoundRobinAssignor, type MemberSubscription, type PartitionAssignor } from '../../src/client/group-assignors.js';
import { CooperativeStickyAssignor, javaHashOrder, javaStringHash, javaTopicPartitionHash } from '../../src/client/group-sticky-assignor.js';
import { decodeAssignment, decodeSubscription, encodeAssignment, encodeSubscription } from '../../src/protocol/consumer-protocol.js';
import type { TopicPartition } from '../../src/client/cluster.js';

const fixture = fileURLToPath(new URL('../../../test/client/fixtures/assignor-goldens.jsonl', import.meta.url));
const goldens = readFileSync(fixture, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, any>);

const ASSIGNORS: Record<string, PartitionAssignor> = {
  range: RangeAssignor,
  roundrobin: RoundRobinAssignor,
  'cooperative-sticky': CooperativeStickyAssignor,
};

const toTps = (pairs: [string, number][]): TopicPartition[] => pairs.map(([topic, partition]) => ({ topic, partition }));
const keys = (tps: readonly TopicPartition[]): string[] => tps.map((tp) => `${tp.topic}-${tp.partition}`).sort();

function membersOf(golden: Record<string, any>): MemberSubscription[] {
  return golden.members.map((m: any) => ({
    memberId: m.memberId,
    groupInstanceId: m.groupInstanceId,
    topics: m.topics,
    userData: null,
    ownedPartitions: toTps(m.ownedPartitions),
    generationId: m.generationId,
    rackId: null,
  }));
}

test('Java hash helpers agree with Java: String.hashCode and HashMap bucket order', () => {
  assert.equal(javaStringHash('hello'), 99162322);
  assert.equal(javaStringHash('consumer-1-0d4f8a2c'), javaStringHash('consumer-1-0d4f8a2c'));
  assert.equal(javaStringHash('polygenelubricants'), -2147483648);
  assert.equal(javaTopicPartitionHash({ topic: 'a', partition: 0 }), 31 * 31 + 97);
  // "Aa" and "BB" collide in Java; a bucket keeps insertion order.
  assert.deepEqual(javaHashOrder(['BB', 'Aa'], javaStringHash), ['BB', 'Aa']);
  assert.deepEqual(javaHashOrder(['b', 'a', 'c'], javaStringHash), ['a', 'b', 'c']);
});

for (const name of Object.keys(ASSIGNORS)) {
  test(`${name} gives every member the partitions Kafka 4.4's ${name} assignor gives it`, () => {
    const cases = goldens.filter((g) => g.kind === 'assign' && g.assignor === name);
    assert.ok(cases.length >= 40, `${cases.length} cases`);
    for (const [index, golden] of cases.entries()) {
      const partitionsPerTopic = new Map(Object.entries(golden.partitionsPerTopic as Record<string, number>));
      const result = ASSIGNORS[name]!.assign(partitionsPerTopic, membersOf(golden));
      for (const member of golden.members) {
        assert.deepEqual(keys(result.get(member.memberId) ?? []), keys(toTps(golden.result[member.memberId])), `case ${index}, member ${member.memberId}: ${JSON.stringify(golden)}`);
      }
    }
  });
}

test('every subscribed partition is assigned at most once, and eager assignors assign each exactly once', () => {
  for (const golden of goldens.filter((g) => g.kind === 'assign')) {
    const partitionsPerTopic = new Map(Object.entries(golden.partitionsPerTopic as Record<string, number>));
    const result = ASSIGNORS[golden.assignor]!.assign(partitionsPerTopic, membersOf(golden));
    const all = [...result.values()].flat().map((tp) => `${tp.topic}-${tp.partition}`);
    assert.equal(new Set(all).size, all.length);
    for (const [member, tps] of result) {
      const topics = golden.members.find((m: any) => m.memberId === member).topics as string[];
      for (const tp of tps) assert.ok(topics.includes(tp.topic), `${member} got ${tp.topic} it does not subscribe to`);
    }
    if (golden.assignor !== 'cooperative-sticky') {
      const subscribed = new Set(golden.members.flatMap((m: any) => m.topics));
      const expected = [...partitionsPerTopic].filter(([t]) => subscribed.has(t)).reduce((sum, [, n]) => sum + n, 0);
      assert.equal(all.length, expected);
    }
  }
});

test('cooperative-sticky with equal subscriptions: balanced once nothing is in transfer, and owned partitions stay put', () => {
  const topics = new Map([['t', 6]]);
  const member = (memberId: string, owned: TopicPartition[], generationId: number): MemberSubscription => ({ memberId, groupInstanceId: null, topics: ['t'], userData: null, ownedPartitions: owned, generationId, rackId: null });
  const first = CooperativeStickyAssignor.assign(topics, [member('a', [], -1)]);
  assert.equal(first.get('a')!.length, 6);
  // b joins: a keeps 3 of its 6, the other 3 are withheld until a has revoked them.
  const second = CooperativeStickyAssignor.assign(topics, [member('a', first.get('a')!, 1), member('b', [], -1)]);
  assert.equal(second.get('a')!.length, 3);
  assert.equal(second.get('b')!.length, 0);
  for (const tp of second.get('a')!) assert.ok(keys(first.get('a')!).includes(`${tp.topic}-${tp.partition}`));
  // a rejoins owning 3: b now gets the other 3.
  const third = CooperativeStickyAssignor.assign(topics, [member('a', second.get('a')!, 2), member('b', [], 2)]);
  assert.deepEqual(keys(third.get('a')!), keys(second.get('a')!));
  assert.equal(third.get('b')!.length, 3);
});

test('ConsumerProtocol subscriptions and assignments encode to Kafka 4.4 bytes at every version and decode back', () => {
  const cases = goldens.filter((g) => g.kind === 'subscription' || g.kind === 'assignment');
  assert.equal(cases.length, 9);
  for (const golden of cases) {
    const bytes = Buffer.from(golden.bytes, 'base64');
    if (golden.kind === 'subscription') {
      const ownedPartitions = groupByTopic(toTps(golden.ownedPartitions));
      const encoded = encodeSubscription({
        topics: golden.topics,
        userData: golden.userData === null ? null : Buffer.from(golden.userData, 'base64'),
        ownedPartitions,
        generationId: golden.generationId,
        rackId: golden.rackId,
      }, golden.version);
      assert.equal(encoded.toString('base64'), golden.bytes, `subscription v${golden.version}`);
      const decoded = decodeSubscription(bytes)!;
      assert.deepEqual(decoded.topics, golden.topics);
      if (golden.version >= 1) assert.deepEqual(decoded.ownedPartitions, ownedPartitions);
      if (golden.version >= 2) assert.equal(decoded.generationId, golden.generationId);
    } else {
      const assignedPartitions = groupByTopic(toTps(golden.assignedPartitions));
      assert.equal(encodeAssignment({ assignedPartitions, userData: null }, golden.version).toString('base64'), golden.bytes, `assignment v${golden.version}`);
      assert.deepEqual(decodeAssignment(bytes)!.assignedPartitions, assignedPartitions);
    }
  }
});

function groupByTopic(tps: readonly TopicPartition[]): { topic: string; partitions: number[] }[] {
  const out: { topic: string; partitions: number[] }[] = [];
  for (const tp of tps) {
    const entry = out.find((e) => e.topic === tp.topic);
    if (entry === undefined) out.push({ topic: tp.topic, partitions: [tp.partition] });
    else entry.partitions.push(tp.partition);
  }
  return out;
}
