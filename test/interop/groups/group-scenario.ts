/**
 * The consumer-group scenario every client runs against a real broker process
 * (a Spool child process; a real Kafka 4.4 with SPOOL_GROUPS_BROKER=kafka, to
 * compare).
 *
 * On a 6-partition topic, group A has three member processes and group B one
 * (members.ts describes the drivers and what they print; every member commits
 * each polled batch synchronously, auto-commit off):
 *  1. Idle group: once A's three assignments are disjoint, cover the topic and
 *     are balanced, 10 records go to each partition; A receives each exactly
 *     once, always from a member that held the partition when it printed it.
 *  2. kill -9: one A member is killed (after its commits); 10 more records per
 *     partition; the two survivors take over all six partitions within the
 *     session timeout (plus a rebalance's slack) and receive every record,
 *     again exactly once apart from what the killed one printed but never
 *     committed.
 *  3. Resume: the survivors are stopped (SIGTERM: close, leave); the broker's
 *     committed offsets (OffsetFetch) equal what the members reported and the
 *     log end; 10 more records per partition; three new members receive
 *     exactly the records from the committed offsets on, once each.
 *  4. Two groups: B, running all along, received every record exactly once.
 * The group types the broker lists (ListGroups v5) match the protocol used,
 * so a client that quietly fell back to the classic protocol fails.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import { Admin } from '../../../src/client/admin.js';
import { Producer } from '../../../src/client/producer.js';
import { startKafka } from '../kafka/kafka.js';
import { startSpool } from '../clients/spool-process.js';
import { Member, until, type Command, type Delivery, type MemberConfig } from './members.js';

export const PARTITIONS = 6;
const RECORDS_PER_PHASE = 10;
/** Classic members' session.timeout.ms (Kafka's group.min.session.timeout.ms) and the broker's group.consumer.session.timeout.ms. */
export const SESSION_TIMEOUT_MS = 6000;
export const HEARTBEAT_INTERVAL_MS = 1000;
/** Deadline for a group to settle after members start (JVMs start on a loaded 2-core machine). */
const JOIN_DEADLINE_MS = 60_000;
/** After a kill -9 the partitions move once the session times out, plus this for the rebalance itself. */
const FAILOVER_SLACK_MS = 15_000;
const DELIVERY_DEADLINE_MS = 30_000;

/**
 * Broker settings for the group tests, in Kafka's names: the consumer
 * protocol's session timeout and heartbeat interval lowered (with the bounds
 * Kafka checks them against), no initial rebalance delay.
 */
export const GROUP_BROKER_OVERRIDES = [
  'group.initial.rebalance.delay.ms=0',
  `group.consumer.session.timeout.ms=${SESSION_TIMEOUT_MS}`,
  `group.consumer.min.session.timeout.ms=${SESSION_TIMEOUT_MS}`,
  `group.consumer.heartbeat.interval.ms=${HEARTBEAT_INTERVAL_MS}`,
  `group.consumer.min.heartbeat.interval.ms=${HEARTBEAT_INTERVAL_MS}`,
] as const;

export interface GroupClient {
  /** Names topics, groups and client ids. */
  name: string;
  protocol: 'classic' | 'consumer';
  /** Classic: partition.assignment.strategy; consumer: group.remote.assignor. Null: the client's default. */
  assignor: string | null;
  /** The driver's command line for one member. */
  command(config: MemberConfig): Command;
  /** What the member's "started" line must say (client name and version). */
  clientPattern: RegExp;
  /** The assignor the broker reports for the group: the classic protocol chosen, or the consumer group's server assignor. */
  expectedAssignor: string;
  /** A skip message when the driver or its library is missing (missingToolSkip: throws with CI=true). */
  missing(): string | undefined;
}

export interface GroupBroker {
  kind: 'spool' | 'kafka';
  bootstrap: string;
  /** The broker's output so far (Spool), for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

/** A Spool process with GROUP_BROKER_OVERRIDES, or Kafka 4.4 when SPOOL_GROUPS_BROKER=kafka. */
export async function startGroupBroker(): Promise<GroupBroker> {
  if (process.env.SPOOL_GROUPS_BROKER === 'kafka') {
    const kafka = await startKafka({ extraConfig: GROUP_BROKER_OVERRIDES });
    return { kind: 'kafka', bootstrap: kafka.bootstrap, output: () => '', stop: () => kafka.stop() };
  }
  const spool = await startSpool({ overrides: GROUP_BROKER_OVERRIDES });
  return {
    kind: 'spool',
    bootstrap: spool.bootstrap,
    output: () => spool.output(),
    async stop() {
      assert.equal(await spool.stop(), 0, 'spool exits 0 on SIGTERM');
    },
  };
}

export interface ScenarioReport {
  client: string;
  /** From the kill -9 until the survivors held every partition. */
  failoverMs: number;
}

export type Key = `${number}:${number}`;
export const key = (partition: number, offset: number): Key => `${partition}:${offset}`;

class Scenario {
  readonly topic: string;
  readonly members: Member[] = [];
  private readonly produced = new Set<Key>();
  private readonly admin: Admin;
  private readonly producer: Producer;

  constructor(readonly broker: GroupBroker, readonly client: GroupClient) {
    this.topic = `groups-${client.name}`;
    this.admin = new Admin({ bootstrapServers: broker.bootstrap });
    this.producer = new Producer({ bootstrapServers: broker.bootstrap });
  }

  start(group: 'A' | 'B', name: string): Member {
    const config: MemberConfig = {
      bootstrap: this.broker.bootstrap,
      group: this.group(group),
      topic: this.topic,
      clientId: `${this.client.name}-${name}`,
      protocol: this.client.protocol,
      assignor: this.client.assignor,
      sessionTimeoutMs: SESSION_TIMEOUT_MS,
      heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS,
    };
    const member = new Member(name, this.client.command(config));
    this.members.push(member);
    return member;
  }

  group(which: 'A' | 'B'): string {
    return `${this.topic}-${which}`;
  }

  async createTopic(): Promise<void> {
    await createReadyTopic(this.admin, this.topic);
  }

  /** RECORDS_PER_PHASE records to every partition; remembers each acknowledged offset. */
  async produce(phase: number): Promise<void> {
    const sends = [];
    for (let partition = 0; partition < PARTITIONS; partition++) {
      for (let i = 0; i < RECORDS_PER_PHASE; i++) sends.push(this.producer.send({ topic: this.topic, partition, value: `phase${phase}-${partition}-${i}` }));
    }
    for (const sent of await Promise.all(sends)) this.produced.add(key(sent.partition, sent.offset));
  }

  expected(): ReadonlySet<Key> {
    return new Set(this.produced);
  }

  async close(): Promise<void> {
    await Promise.all(this.members.filter((member) => member.alive).map((member) => member.stop()));
    await this.producer.close();
    await this.admin.close();
  }

  async groupTypes(): Promise<Map<string, string | null>> {
    const listed = await this.admin.listGroups();
    return new Map(listed.map((group) => [group.groupId, group.type]));
  }

  /**
   * The broker's description of group A agrees with its members: type, Stable,
   * the assignor, one member per process (by client id) holding what that
   * process says it holds. Retried for a few seconds: a consumer-protocol
   * member's assignment is recorded when its next heartbeat acknowledges it.
   */
  async checkDescribed(members: readonly Member[]): Promise<void> {
    const want = {
      type: this.client.protocol,
      state: 'Stable',
      assignor: this.client.expectedAssignor,
      members: members.map((m) => [`${this.client.name}-${m.name}`, m.assignment] as const).sort(byFirst),
    };
    let got: unknown;
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await delay(200)) {
      const [group] = await this.admin.describeConsumerGroups([this.group('A')]);
      got = {
        type: group!.type,
        state: group!.groupState,
        assignor: group!.partitionAssignor,
        members: group!.members.map((m) => [m.clientId, m.assignment.map((tp) => tp.partition).sort((a, b) => a - b)] as const).sort(byFirst),
      };
      if (isDeepStrictEqual(got, want)) return;
    }
    assert.deepEqual(got, want, 'the broker describes group A as its members see it');
  }

  async brokerCommitted(group: 'A' | 'B'): Promise<Map<number, number>> {
    const offsets = await this.admin.listConsumerGroupOffsets(this.group(group));
    return new Map(offsets.filter((o) => o.topic === this.topic).map((o) => [o.partition, o.offset]));
  }
}

/**
 * Creates a PARTITIONS-partition topic and waits until the broker's metadata
 * gives every partition a leader (Kafka applies a new topic to its metadata
 * cache shortly after CreateTopics answers; kafkajs gives up on a partition
 * the broker does not host yet).
 */
export async function createReadyTopic(admin: Admin, topic: string): Promise<void> {
  await admin.createTopics([{ name: topic, numPartitions: PARTITIONS, replicationFactor: 1 }]);
  for (let attempt = 0; ; attempt++) {
    const [described] = await admin.describeTopics([topic]).catch(() => [undefined]);
    if (described !== undefined && described.partitions.length === PARTITIONS && described.partitions.every((p) => p.leader >= 0)) return;
    assert.ok(attempt < 100, `topic ${topic} has no leader for every partition after ${attempt} metadata requests`);
    await delay(100);
  }
}

/** Disjoint assignments that cover every partition, sizes within one of each other. */
export function settled(members: readonly Member[]): boolean {
  const sets = members.map((member) => member.assignment);
  if (sets.some((set) => set === null)) return false;
  const sizes = sets.map((set) => set!.length);
  const all = sets.flatMap((set) => set!);
  return new Set(all).size === all.length && all.length === PARTITIONS && Math.max(...sizes) - Math.min(...sizes) <= 1;
}

export function deliveredKeys(members: readonly Member[]): Set<Key> {
  return new Set(members.flatMap((member) => member.deliveries.map((d) => key(d.partition, d.offset))));
}

export function receivedAll(members: readonly Member[], expected: ReadonlySet<Key>): boolean {
  const seen = deliveredKeys(members);
  return [...expected].every((k) => seen.has(k));
}

/** A killed member's delivery that no later commit of its covered: it may come again. */
const killedUncommitted = (member: Member, delivery: Delivery): boolean => member.killed && !member.committedAfter(delivery);

/**
 * Among `members` (one group), every expected record was delivered exactly
 * once, except that a delivery for which `mayRepeat` holds (by default: a
 * killed member printed it and committed nothing covering it) allows one more;
 * nothing else was delivered; every delivery came from a member holding the
 * partition at the time.
 */
export function checkExactlyOnce(what: string, members: readonly Member[], expected: ReadonlySet<Key>, mayRepeat = killedUncommitted): void {
  const count = new Map<Key, number>();
  const allowed = new Map<Key, number>();
  for (const member of members) {
    for (const delivery of member.deliveries) {
      const k = key(delivery.partition, delivery.offset);
      count.set(k, (count.get(k) ?? 0) + 1);
      if (mayRepeat(member, delivery)) allowed.set(k, (allowed.get(k) ?? 0) + 1);
      assert.ok(delivery.assignment.includes(delivery.partition), `${what}: ${member.name} printed ${k} while assigned ${JSON.stringify(delivery.assignment)}`);
    }
  }
  const missing = [...expected].filter((k) => !count.has(k));
  assert.deepEqual(missing, [], `${what}: records never delivered`);
  const unexpected = [...count.keys()].filter((k) => !expected.has(k));
  assert.deepEqual(unexpected, [], `${what}: records delivered that were never produced`);
  const repeated = [...count].filter(([k, n]) => n > 1 + (allowed.get(k) ?? 0)).map(([k, n]) => `${k} x${n}`);
  assert.deepEqual(repeated, [], `${what}: records delivered more than once (beyond a killed member's uncommitted ones)`);
}

/** The highest next offset any of `members` committed, per partition. */
function reportedCommits(members: readonly Member[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const member of members) {
    for (const [partition, next] of member.committedOffsets()) out.set(partition, Math.max(out.get(partition) ?? 0, next));
  }
  return out;
}

function logEnd(expected: ReadonlySet<Key>): Map<number, number> {
  const out = new Map<number, number>();
  for (const k of expected) {
    const [partition, offset] = k.split(':').map(Number) as [number, number];
    out.set(partition, Math.max(out.get(partition) ?? 0, offset + 1));
  }
  return out;
}

const byFirst = (a: readonly [string, unknown], b: readonly [string, unknown]): number => a[0].localeCompare(b[0]);
const sorted = (map: ReadonlyMap<number, number>): [number, number][] => [...map].sort((a, b) => a[0] - b[0]);

/** Runs the whole scenario for one client on `broker`. */
export async function runGroupScenario(broker: GroupBroker, client: GroupClient): Promise<ScenarioReport> {
  const s = new Scenario(broker, client);
  try {
    return await phases(s);
  } catch (error) {
    const state = s.members.map((member) => `  ${member.describe()}`).join('\n');
    (error as Error).message += `\n--- members ---\n${state}\n--- broker output (tail) ---\n${broker.output().slice(-1500)}`;
    throw error;
  } finally {
    await s.close();
  }
}

async function phases(s: Scenario): Promise<ScenarioReport> {
  await s.createTopic();
  const b = s.start('B', 'b1');
  const first = ['a1', 'a2', 'a3'].map((name) => s.start('A', name));
  const all = [...first, b];
  await until('group A to settle and B to hold every partition', () => settled(first) && settled([b]), all, JOIN_DEADLINE_MS);
  for (const member of all) assert.match(member.client ?? '', s.client.clientPattern);
  const types = await s.groupTypes();
  const type = s.client.protocol === 'consumer' ? 'consumer' : 'classic';
  assert.equal(types.get(s.group('A')), type, `group A is a ${type} group`);
  assert.equal(types.get(s.group('B')), type, `group B is a ${type} group`);
  await s.checkDescribed(first);

  // 1. Idle group: every record exactly once.
  await s.produce(1);
  const phase1 = s.expected();
  await until('phase 1 records, committed', () => receivedAll(first, phase1) && first.every((m) => m.allCommitted()), all, DELIVERY_DEADLINE_MS);
  checkExactlyOnce('idle group A', first, phase1);

  // 2. kill -9 one member: its partitions move to the survivors.
  const [a1, a2, a3] = first as [Member, Member, Member];
  const killedAt = Date.now();
  await a2.kill9();
  await s.produce(2);
  const survivors = [a1, a3];
  await until('the survivors to hold every partition', () => settled(survivors), all, SESSION_TIMEOUT_MS + FAILOVER_SLACK_MS);
  const failoverMs = Date.now() - killedAt;
  const phase2 = s.expected();
  await until('phase 2 records, committed', () => receivedAll(first, phase2) && survivors.every((m) => m.allCommitted()), all, DELIVERY_DEADLINE_MS);
  checkExactlyOnce('group A across the kill -9', first, phase2);

  // 3. All stop; committed offsets resume.
  for (const member of survivors) assert.equal(await member.stop(), 0, `${member.name} exits 0 on SIGTERM`);
  for (const member of survivors) assert.ok(member.closed, `${member.name} printed closed`);
  const committed = await s.brokerCommitted('A');
  assert.deepEqual(sorted(committed), sorted(reportedCommits(first)), 'the broker\'s committed offsets are the ones the members committed');
  assert.deepEqual(sorted(committed), sorted(logEnd(phase2)), 'everything consumed before the restart was committed');
  await s.produce(3);
  const phase3 = new Set([...s.expected()].filter((k) => !phase2.has(k)));
  const second = ['a4', 'a5', 'a6'].map((name) => s.start('A', name));
  await until('the restarted members to receive phase 3', () => settled(second) && receivedAll(second, phase3), [...second, b], JOIN_DEADLINE_MS);
  checkExactlyOnce('group A after the restart (resuming at the committed offsets)', second, phase3);

  // 4. Group B received everything, once.
  const everything = s.expected();
  await until('group B to receive everything', () => receivedAll([b], everything), [b], DELIVERY_DEADLINE_MS);
  checkExactlyOnce('group B', [b], everything);
  for (const member of [...second, b]) assert.equal(await member.stop(), 0, `${member.name} exits 0 on SIGTERM`);
  return { client: b.client!, failoverMs };
}

/**
 * One broker for `clients`, each running the scenario on its own topic and
 * groups as a subtest, all at once (the parent test needs `concurrency: true`).
 * A client whose driver is missing is skipped (fails with CI=true).
 */
export async function runGroupScenarios(t: TestContext, clients: readonly GroupClient[]): Promise<void> {
  const broker = await startGroupBroker();
  try {
    await Promise.all(clients.map((client) => t.test(client.name, async (sub) => {
      const skip = client.missing();
      if (skip !== undefined) return sub.skip(skip);
      const report = await runGroupScenario(broker, client);
      sub.diagnostic(`${report.client} on ${broker.kind}: kill -9 to failover ${report.failoverMs} ms`);
    })));
  } finally {
    await broker.stop();
  }
}
