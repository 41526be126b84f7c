/**
 * Rebalances while records flow, with real clients against a real Spool
 * process. A producer writes one record to each of 6 partitions every 25 ms
 * while the group goes 1 → 2 → 3 members (each new one receives records),
 * one leaves (SIGTERM: close, LeaveGroup), one is killed with kill -9 (its
 * partitions move once its session times out) and a fourth joins. Then every
 * produced record was delivered, each by a member holding its partition at
 * the time, and a record came twice only where its first delivery was not
 * followed by a successful commit of that member (a commit refused during a
 * rebalance, or a kill) — at-least-once, with nothing skipped.
 *
 * Commits refused along the way are reported as diagnostics (a KIP-848
 * member's commit with its previous epoch is accepted for partitions it kept,
 * KIP-1251; test/group/commit-assignment-epochs.test.ts).
 * Debian's librdkafka 2.0.2 with cooperative-sticky is left out: when
 * partitions move under load it skips records, or delivers again records it
 * had committed, against Kafka 4.4 as well (librdkafka 2.16 from PyPI does
 * neither, nor does 2.15 in @confluentinc/kafka-javascript).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { Admin } from '../../../src/client/admin.js';
import { Producer } from '../../../src/client/producer.js';
import { groupClientMatrix } from './group-clients.js';
import {
  checkExactlyOnce, createReadyTopic, deliveredKeys, HEARTBEAT_INTERVAL_MS, key, PARTITIONS, receivedAll, SESSION_TIMEOUT_MS, settled, startGroupBroker,
  type GroupBroker, type GroupClient, type Key,
} from './group-scenario.js';
import { Member, until } from './members.js';

const PRODUCE_EVERY_MS = 25;
/** Records a new member must receive before the next step. */
const RECEIVED_BEFORE_NEXT = 12;
const STEP_DEADLINE_MS = 60_000;

async function underLoad(broker: GroupBroker, client: GroupClient): Promise<string> {
  const admin = new Admin({ bootstrapServers: broker.bootstrap });
  const producer = new Producer({ bootstrapServers: broker.bootstrap });
  const topic = `load-${client.name}`;
  const members: Member[] = [];
  const start = (name: string): Member => {
    const member = new Member(name, client.command({
      bootstrap: broker.bootstrap, group: `${topic}-group`, topic, clientId: `${client.name}-${name}`,
      protocol: client.protocol, assignor: client.assignor, sessionTimeoutMs: SESSION_TIMEOUT_MS, heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS,
    }));
    members.push(member);
    return member;
  };
  await createReadyTopic(admin, topic);
  const produced = new Set<Key>();
  let producing = true;
  const load = (async () => {
    for (let i = 0; producing; i++) {
      const sends = Array.from({ length: PARTITIONS }, (_, partition) => producer.send({ topic, partition, value: `load-${i}` }));
      for (const sent of await Promise.all(sends)) produced.add(key(sent.partition, sent.offset));
      await delay(PRODUCE_EVERY_MS);
    }
  })();
  const took: string[] = [];
  const step = async (what: string, group: readonly Member[], newcomer?: Member): Promise<void> => {
    const startedAt = Date.now();
    await until(what, () => settled(group) && (newcomer === undefined || newcomer.deliveries.length >= RECEIVED_BEFORE_NEXT), members, STEP_DEADLINE_MS);
    took.push(`${what} ${Date.now() - startedAt} ms`);
  };
  try {
    const m1 = start('m1');
    await step('m1 alone', [m1], m1);
    const m2 = start('m2');
    await step('m2 to join', [m1, m2], m2);
    const m3 = start('m3');
    await step('m3 to join', [m1, m2, m3], m3);
    assert.equal(await m1.stop(), 0, 'm1 exits 0 on SIGTERM');
    await step('m1 to leave', [m2, m3]);
    await m2.kill9();
    await step('m2\'s session to time out', [m3]);
    const m4 = start('m4');
    await step('m4 to join', [m3, m4], m4);
    producing = false;
    await load;
    // Not "and committed": a member's last commit may be refused by the last rebalance, with nothing after it to commit.
    await until('every record', () => receivedAll(members, produced), members, STEP_DEADLINE_MS);
    checkExactlyOnce('under load', members, produced, (member, delivery) => !member.committedAfter(delivery));
    const repeated = members.reduce((n, m) => n + m.deliveries.length, 0) - produced.size;
    const refused = members.flatMap((m) => m.failedCommits.map((f) => `${m.name}: ${f}`));
    return `${members[0]!.client}: ${produced.size} records, ${repeated} delivered twice, ${refused.length} commits refused` +
      `${refused.length > 0 ? ` (${refused[0]!.slice(0, 160)})` : ''}; ${took.join(', ')}`;
  } catch (error) {
    const seen = deliveredKeys(members);
    const missing = [...produced].filter((k) => !seen.has(k));
    if (missing.length > 0) (error as Error).message += `\n--- never delivered (${missing.length}) ---\n  ${missing.slice(0, 20).join(' ')}`;
    (error as Error).message += `\n--- members ---\n${members.map((m) => `  ${m.describe()}`).join('\n')}\n--- broker output (tail) ---\n${broker.output().slice(-1500)}`;
    throw error;
  } finally {
    producing = false;
    await load.catch(() => undefined);
    await Promise.all(members.map((member) => member.stop()));
    await producer.close();
    await admin.close();
  }
}

test('rebalances under load: members join, leave and are killed while records flow; nothing is skipped', { concurrency: true }, async (t) => {
  const broker = await startGroupBroker();
  try {
    const clients = groupClientMatrix();
    await Promise.all(clients.map((client) => t.test(client.name, async (sub) => {
      const skip = client.missing();
      if (skip !== undefined) return sub.skip(skip);
      sub.diagnostic(await underLoad(broker, client));
    })));
  } finally {
    await broker.stop();
  }
});
