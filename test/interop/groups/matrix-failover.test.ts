/**
 * Every client of the interop matrix consuming RF=3 topics through leader
 * failovers, on three real Spool processes (test/interop/clients/spool-cluster.ts).
 *
 * One topic (6 partitions, replication factor 3, min.insync.replicas=2) per
 * client, all at once in one cluster. Each group client runs GROUP_MEMBERS
 * member processes in its own group (members.ts: they print every record
 * and commit each polled batch synchronously); kcat consumes its topic by
 * assignment (every partition, no group, nothing committed). Spool's own
 * Producer writes to every partition of every topic all along, acks=all and
 * idempotent, one loop per partition, so partitions whose leader lives keep
 * flowing while others fail over; the test keeps what was acknowledged.
 *
 * The faults, chosen deliberately:
 *  1. kill -9 of node 0: the only address the clients were given to
 *     bootstrap from, a leader of partitions of every topic, and the group
 *     coordinator of the groups whose __consumer_offsets partition it leads
 *     (the test says which). Clients must carry on with the brokers they
 *     learnt from Metadata. Once nodes 1 and 2 lead everything, every client
 *     must receive every record acknowledged by then; node 0 restarts and
 *     rejoins every ISR.
 *  2. kill -9 of node 1 or 2, whichever leads more partitions now, while
 *     node 0 (restarted) must serve some of the moved ones.
 *     Again every record acknowledged by then is received; node 1 restarts.
 * Then every acknowledged record was delivered to each client with the value
 * acknowledged at its offset (nothing lost, overwritten or skipped), nothing
 * else was delivered, each group delivery came from a member holding the
 * partition, and a record came twice only where its earlier delivery was
 * not covered by a later successful commit of that member; kcat, which
 * never rebalances, delivers each record exactly once.
 *
 * @platformatic/kafka has no group member driver yet (docs/SKIPPED.md).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { Admin } from '../../../src/client/admin.js';
import { KafkaError } from '../../../src/client/errors.js';
import { Producer } from '../../../src/client/producer.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { hasCommand } from '../clients/harness.js';
import { missingToolSkip } from '../clients/scenario.js';
import { CLUSTER_NODES, startSpoolCluster, type SpoolCluster } from '../clients/spool-cluster.js';
import { until as untilProbe } from '../cluster/until.js';
import { groupClientMatrix } from './group-clients.js';
import {
  GROUP_BROKER_OVERRIDES, HEARTBEAT_INTERVAL_MS, key, PARTITIONS, SESSION_TIMEOUT_MS, settled, type GroupClient, type Key,
} from './group-scenario.js';
import { Member, until, type Delivery } from './members.js';

const GROUP_MEMBERS = 2;
/**
 * Clients run with one member only. @confluentinc/kafka-javascript with the
 * consumer protocol: in 2 of 5 runs of this file (load average 20-30) its
 * first member kept all six partitions for over 90 s after the second
 * joined, while the coordinator described it as owing three of them
 * (epoch 1, target 0-2; the newcomer at epoch 2 waiting for 3-5), before any
 * fault. Not yet compared with Kafka (docs/SKIPPED.md); with one member it
 * still goes through every failover.
 */
const SINGLE_MEMBER = new Set(['kafka-javascript-consumer-default']);
const PRODUCE_EVERY_MS = 100;
/** Records each client must have received before the first kill: consumption is under way. */
const RECEIVED_BEFORE_FAULT = 20;
/** For real processes on a loaded two-core machine (four JVMs among the members). */
const WAIT_MS = 90_000;
/** Broker timeouts short enough for a kill -9 to be noticed in seconds (as in test/fault/fault-cluster.ts). */
const CLUSTER_OVERRIDES = [
  ...GROUP_BROKER_OVERRIDES,
  'broker.session.timeout.ms=4000',
  'broker.heartbeat.interval.ms=500',
  'replica.fetch.backoff.ms=100',
];

/** One consumer under test: a group client's members, or kcat by assignment. */
interface Subject {
  name: string;
  topic: string;
  members: Member[];
  /** Group members: a delivery may come again where no later commit of its member covered it. kcat: never. */
  grouped: boolean;
}

function startGroup(cluster: SpoolCluster, client: GroupClient): Subject {
  const topic = `failover-${client.name}`;
  const members = Array.from({ length: SINGLE_MEMBER.has(client.name) ? 1 : GROUP_MEMBERS }, (_, i) => new Member(`m${i + 1}`, client.command({
    bootstrap: cluster.bootstrap, group: `${topic}-group`, topic, clientId: `${client.name}-m${i + 1}`,
    protocol: client.protocol, assignor: client.assignor, sessionTimeoutMs: SESSION_TIMEOUT_MS, heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS,
  })));
  return { name: client.name, topic, members, grouped: true };
}

/** kcat -C on every partition of the topic from the beginning, each record as a members.ts "record" line. */
function startKcat(cluster: SpoolCluster): Subject {
  const topic = 'failover-kcat';
  const format = '{"event":"record","partition":%p,"offset":%o,"value":"%s"}\\n';
  const member = new Member('kcat', { file: 'kcat', args: ['-C', '-b', cluster.bootstrap, '-t', topic, '-o', 'beginning', '-u', '-q', '-f', format] });
  return { name: 'kcat', topic, members: [member], grouped: false };
}

/** Every partition of every topic, as the running nodes see them. */
async function describe(cluster: SpoolCluster, topics: readonly string[], down: number | null): Promise<Map<string, { leader: number; isr: number[] }[]>> {
  const admin = new Admin({ bootstrapServers: cluster.addresses.filter((_, id) => id !== down).join(',') });
  try {
    const described = await admin.describeTopics(topics);
    return new Map(described.map((t) => [t.name, [...t.partitions].sort((a, b) => a.partition - b.partition).map((p) => ({ leader: p.leader, isr: p.isr }))]));
  } finally {
    await admin.close();
  }
}

function untilPartitions(what: string, cluster: SpoolCluster, topics: readonly string[], down: number | null, accept: (p: { leader: number; isr: number[] }) => boolean) {
  return untilProbe(what, async () => {
    const seen = await describe(cluster, topics, down).catch(() => null);
    return seen !== null && [...seen.values()].every((partitions) => partitions.length === PARTITIONS && partitions.every(accept)) ? seen : null;
  }, { waitMs: WAIT_MS, pollMs: 200 });
}

const fullyReplicated = (cluster: SpoolCluster, topics: readonly string[]) =>
  untilPartitions('every partition led, ISR = all nodes', cluster, topics, null, (p) => p.leader >= 0 && p.isr.length === CLUSTER_NODES);

/** The groups whose coordinator is node `id`: the leader of their __consumer_offsets partition (Kafka's hash of the group id). */
async function coordinatedBy(cluster: SpoolCluster, id: number, groups: readonly string[]): Promise<string[]> {
  const offsets = (await describe(cluster, ['__consumer_offsets'], null)).get('__consumer_offsets')!;
  return groups.filter((group) => offsets[Math.abs(javaHashCode(group)) % offsets.length]!.leader === id);
}

function javaHashCode(text: string): number {
  let hash = 0;
  for (let i = 0; i < text.length; i++) hash = (Math.imul(hash, 31) + text.charCodeAt(i)) | 0;
  return hash;
}

/**
 * Every acknowledged record delivered with its value; nothing delivered that
 * was not sent; group deliveries only from a member holding the partition.
 * A record delivered again (kcat: never) is allowed only where the member
 * that delivered it before had not reported a commit covering it by then
 * (its commit line read before the repeat's line).
 */
function check(subject: Subject, acked: ReadonlyMap<Key, string>, unsure: ReadonlySet<string>): { deliveries: number; repeated: number } {
  const byKey = new Map<Key, { member: Member; delivery: Delivery }[]>();
  const wrong: string[] = [];
  for (const member of subject.members) {
    for (const delivery of member.deliveries) {
      const k = key(delivery.partition, delivery.offset);
      byKey.set(k, [...(byKey.get(k) ?? []), { member, delivery }]);
      const sent = acked.get(k);
      if (sent === undefined ? !unsure.has(delivery.value ?? '') : sent !== delivery.value) wrong.push(`${k}=${delivery.value} (acknowledged ${sent ?? 'nothing'})`);
      if (subject.grouped) assert.ok(delivery.assignment.includes(delivery.partition), `${member.name} printed ${k} while assigned ${JSON.stringify(delivery.assignment)}`);
    }
  }
  assert.deepEqual(wrong.slice(0, 20), [], 'records delivered that were not the ones acknowledged at their offsets');
  const missing = [...acked.keys()].filter((k) => !byKey.has(k));
  assert.deepEqual(missing.slice(0, 20), [], `acknowledged records never delivered (${missing.length})`);
  const repeated: string[] = [];
  for (const [k, seen] of byKey) {
    seen.sort((a, b) => a.delivery.arrival - b.delivery.arrival);
    for (let i = 1; i < seen.length; i++) {
      const before = seen[i - 1]!;
      const again = seen[i]!;
      if (!subject.grouped || before.member.committedBefore(before.delivery, again.delivery.arrival)) {
        repeated.push(`${k} by ${before.member.name} (line ${before.delivery.line}) then ${again.member.name} (line ${again.delivery.line})`);
      }
    }
  }
  assert.deepEqual(repeated.slice(0, 20), [], `records delivered again although a commit had covered them (${repeated.length})\n` +
    `${subject.members.map((m) => `  ${m.describe()}\n    commits (line: partition next) ${m.commits.slice(-60).map(([line, p, next]) => `${line}: ${p} ${next}`).join(', ')}`).join('\n')}`);
  const deliveries = [...byKey.values()].reduce((n, seen) => n + seen.length, 0);
  return { deliveries, repeated: deliveries - byKey.size };
}

/** The broker's view of each group, for failure messages. */
async function describeGroups(cluster: SpoolCluster, subjects: readonly Subject[], down: number | null): Promise<string> {
  const admin = new Admin({ bootstrapServers: cluster.addresses.filter((_, id) => id !== down).join(','), requestTimeoutMs: 10_000 });
  try {
    // Bounded: a coordinator that does not answer must not keep the failure message from being written.
    const groups = await Promise.race([
      admin.describeConsumerGroups(subjects.filter((s) => s.grouped).map((s) => `${s.topic}-group`)),
      delay(20_000).then(() => { throw new Error('no answer within 20 s'); }),
    ]);
    return groups.map((group) => `  ${JSON.stringify(group, (_, value: unknown) => (typeof value === 'bigint' ? String(value) : value))}`).join('\n');
  } catch (error) {
    return `  (not described: ${String(error)})`;
  } finally {
    await admin.close();
  }
}

const delivered = (subject: Subject): Set<Key> => new Set(subject.members.flatMap((m) => m.deliveries.map((d: Delivery) => key(d.partition, d.offset))));

function receivedAll(subject: Subject, expected: Iterable<Key>): boolean {
  const seen = delivered(subject);
  for (const k of expected) if (!seen.has(k)) return false;
  return true;
}

/** What the producer had acknowledged, per topic: the value at each partition:offset. */
type Acknowledged = Map<string, Map<Key, string>>;

const snapshot = (acked: Acknowledged): Map<string, Key[]> => new Map([...acked].map(([topic, records]) => [topic, [...records.keys()]]));

/** How many sends each partition of each topic had acknowledged. */
const ackCounts = (acked: Acknowledged, topics: readonly string[]): number[] =>
  topics.flatMap((topic) => Array.from({ length: PARTITIONS }, (_, p) => [...acked.get(topic)!.keys()].filter((k) => k.startsWith(`${p}:`)).length));

/**
 * Opt-in (SPOOL_FAILOVER_MATRIX=1) until it is steady: in 2 of 7 full runs on a loaded machine some client did not
 * receive what was acknowledged within 90 s once the second victim (the coordinator of 10-11 of the 11 groups) was
 * down, and Debian's librdkafka members then did not exit on SIGTERM (docs/SKIPPED.md).
 */
const OPT_IN = process.env.SPOOL_FAILOVER_MATRIX === '1' || process.env.SPOOL_FAILOVER_ONLY !== undefined;

test('every client consumes RF=3 topics through kill -9 of the bootstrap node and then of another leader', { timeout: 600_000, skip: OPT_IN ? false : 'set SPOOL_FAILOVER_MATRIX=1 (not yet steady, docs/SKIPPED.md)' }, async (t) => {
  const clients = groupClientMatrix().filter((client) => {
    // SPOOL_FAILOVER_ONLY=regex: only the clients (and kcat) whose name matches, to look into one.
    if (process.env.SPOOL_FAILOVER_ONLY !== undefined && !new RegExp(process.env.SPOOL_FAILOVER_ONLY).test(client.name)) return false;
    const skip = client.missing();
    if (skip !== undefined) t.diagnostic(`${client.name} skipped: ${skip}`);
    return skip === undefined;
  });
  const kcatSkip = process.env.SPOOL_FAILOVER_ONLY !== undefined && !new RegExp(process.env.SPOOL_FAILOVER_ONLY).test('kcat')
    ? 'not in SPOOL_FAILOVER_ONLY'
    : missingToolSkip(hasCommand('kcat'), 'kcat not installed: run test/interop/kcat/ci-setup.sh');
  if (kcatSkip !== undefined) t.diagnostic(`kcat skipped: ${kcatSkip}`);
  const startedAt = Date.now();
  const cluster = await startSpoolCluster({ overrides: CLUSTER_OVERRIDES });
  const subjects: Subject[] = [];
  const acked: Acknowledged = new Map();
  const unsure = new Set<string>();
  const producer = new Producer({ bootstrapServers: cluster.addresses.join(',') });
  let producing = true;
  let loops: Promise<void>[] = [];
  const steps: string[] = [];
  let codes: (number | null)[] = [];
  /** The node killed and not yet restarted. */
  let down: number | null = null;
  const step = (what: string): void => {
    steps.push(`${what} at ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
    // SPOOL_FAILOVER_TRACE=1: each step as it happens (a run cut off by the test's timeout says where it was).
    if (process.env.SPOOL_FAILOVER_TRACE === '1') process.stderr.write(`matrix-failover: ${steps.at(-1)}\n`);
  };
  try {
    const topics = [...clients.map((client) => `failover-${client.name}`), ...(kcatSkip === undefined ? ['failover-kcat'] : [])];
    const admin = new Admin({ bootstrapServers: cluster.addresses.join(',') });
    try {
      // One request per topic: a request retried after a timeout on a loaded machine may find its topic created by the first.
      await Promise.all(topics.map((name) => admin.createTopics([{ name, numPartitions: PARTITIONS, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } }])
        .catch((error: unknown) => { if (!(error instanceof KafkaError && error.code === ErrorCode.TOPIC_ALREADY_EXISTS)) throw error; })));
    } finally {
      await admin.close();
    }
    for (const topic of topics) acked.set(topic, new Map());
    const initial = await fullyReplicated(cluster, topics);
    step('topics replicated');
    for (const [topic, partitions] of initial) assert.ok(partitions.some((p) => p.leader === 0), `node 0 leads a partition of ${topic}: ${JSON.stringify(partitions)}`);
    subjects.push(...clients.map((client) => startGroup(cluster, client)), ...(kcatSkip === undefined ? [startKcat(cluster)] : []));
    const everyone = subjects.flatMap((s) => s.members);
    const groups = subjects.filter((s) => s.grouped);
    await until('every group to settle', () => groups.every((s) => settled(s.members)), everyone, WAIT_MS);
    step('groups settled');
    loops = topics.flatMap((topic) => Array.from({ length: PARTITIONS }, async (_, partition) => {
      for (let i = 0; producing; i++) {
        const value = `${topic}/${partition}/${i}`;
        try {
          const sent = await producer.send({ topic, partition, value });
          acked.get(topic)!.set(key(sent.partition, sent.offset), value);
        } catch {
          unsure.add(value);
        }
        await delay(PRODUCE_EVERY_MS);
      }
    }));
    await until('every client to receive records', () => subjects.every((s) => delivered(s).size >= RECEIVED_BEFORE_FAULT), everyone, WAIT_MS);
    step('consuming');

    for (const round of [0, 1]) {
      // First node 0, the bootstrap node; then whichever other node leads the most partitions now.
      const leaders = [...(await describe(cluster, topics, null)).values()].flat().map((p) => p.leader);
      const led = (id: number): number => leaders.filter((leader) => leader === id).length;
      const victim = round === 0 ? 0 : led(1) >= led(2) ? 1 : 2;
      assert.ok(led(victim) > 0, `node ${victim} leads partitions: ${JSON.stringify(leaders)}`);
      const coordinated = await coordinatedBy(cluster, victim, groups.map((s) => `${s.topic}-group`));
      const killedAt = Date.now();
      await cluster.kill9(victim);
      down = victim;
      step(`node ${victim} killed (leader of ${led(victim)} of ${leaders.length} partitions, coordinator of ${coordinated.length} groups: ${coordinated.join(', ') || 'none'})`);
      await untilPartitions(`leaders other than node ${victim}`, cluster, topics, victim, (p) => p.leader >= 0 && p.leader !== victim);
      step(`re-elected in ${Date.now() - killedAt} ms`);
      // Once every partition took writes from its new leader, each client must receive all acknowledged so far while node `victim` is down.
      const before = ackCounts(acked, topics);
      await untilProbe('a send acknowledged on every partition after the re-election', async () => (ackCounts(acked, topics).every((n, i) => n > before[i]!) ? true : null), { waitMs: WAIT_MS, pollMs: 100 });
      step('every partition took writes again');
      const target = snapshot(acked);
      await until(`every client to receive what was acknowledged with node ${victim} down`, () => subjects.every((s) => receivedAll(s, target.get(s.topic)!)), everyone, WAIT_MS);
      step(`clients caught up without node ${victim}`);
      await cluster.restart(victim);
      down = null;
      await fullyReplicated(cluster, topics);
      step(`node ${victim} back in every ISR`);
    }
    producing = false;
    await Promise.all(loops);
    await until('every acknowledged record delivered', () => subjects.every((s) => receivedAll(s, acked.get(s.topic)!.keys())), everyone, WAIT_MS);
    step('all delivered');
    for (const subject of subjects) {
      await t.test(subject.name, () => {
        const { deliveries, repeated } = check(subject, acked.get(subject.topic)!, unsure);
        const refused = subject.members.reduce((n, m) => n + m.failedCommits.length, 0);
        t.diagnostic(`${subject.name} (${subject.members[0]!.client ?? 'kcat'}): ${deliveries} deliveries, ${repeated} repeated, ${refused} commits refused`);
      });
    }
    t.diagnostic(`${[...acked.values()].reduce((n, m) => n + m.size, 0)} records acknowledged, ${unsure.size} sends failed; ${steps.join('; ')}`);
  } catch (error) {
    (error as Error).message += `\n--- groups as the coordinators describe them ---\n${await describeGroups(cluster, subjects, down)}`;
    (error as Error).message += `\n--- steps ---\n  ${steps.join('\n  ')}\n--- consumers ---\n${subjects.map((s) => `  ${s.name}: ${s.members.map((m) => m.describe()).join('\n    ')}`).join('\n')}` +
      `\n--- cluster output (tail) ---\n${cluster.output().slice(-3000)}`;
    throw error;
  } finally {
    producing = false;
    await Promise.all(loops);
    // Bounded: a driver whose close hangs on a cluster it lost (seen: librdkafka 2.0.2 after the coordinator's node died) is killed.
    await Promise.all(subjects.flatMap((s) => s.members.map((m) => Promise.race([m.stop(), delay(15_000).then(() => m.kill9())]))));
    await producer.close();
    codes = await cluster.stop();
  }
  assert.deepEqual(codes, [0, 0, 0], `every node exits 0 on SIGTERM\n${cluster.output().slice(-3000)}`);
});
