/**
 * `spool doctor` names the stuck link of the chain, with its evidence, on
 * real nodes started in this process (startBroker, startCluster): each
 * test builds one situation and expects the finding that names it, and a
 * healthy broker gives no finding and exit code 0. The sampling window
 * (--sample-ms) is doctor's own behaviour and kept small; every other
 * wait is for an observed state.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import { silentLogger } from '../../src/common/logger.js';
import type { DoctorReport, Finding } from '../../src/insight/doctor-findings.js';
import { startCluster, type RunningCluster } from '../../src/node/cluster.js';
import { startBroker, type RunningBroker } from '../../src/node/embedded.js';
import { runCli } from '../../src/cli/program.js';
import { until } from '../interop/cluster/until.js';
import { hosted, partitionOf } from '../replication/cluster-topic.js';
import { testIo } from './cli-io.js';
import { call, produceBody, WireClient } from '../server/wire-client.js';
import { realClock } from '../../src/io/clock.js';
import { realEnv, SeededRandom } from '../../src/io/env.js';
import { SimFileSystem } from '../../src/io/sim-fs.js';
import { buildBatch } from '../../src/protocol/records/records.js';
import { Produce } from '../../src/protocol/schemas/00-produce.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { encodeSubscription } from '../../src/protocol/consumer-protocol.js';
import { FindCoordinator } from '../../src/protocol/schemas/10-find-coordinator.js';
import { JoinGroup } from '../../src/protocol/schemas/11-join-group.js';
import { ConsumerGroupHeartbeat } from '../../src/protocol/schemas/68-consumer-group-heartbeat.js';

const SAMPLE_MS = '300';
const WAIT = { waitMs: 60_000, pollMs: 25 };

interface DoctorRun {
  code: number;
  report: DoctorReport;
  err: string;
}

async function doctor(bootstrapServers: string, ...args: string[]): Promise<DoctorRun> {
  const io = testIo();
  const code = await runCli(['doctor', '--bootstrap-server', bootstrapServers, '--sample-ms', SAMPLE_MS, '--json', ...args], io);
  assert.ok(io.out.startsWith('{'), `doctor printed a report (exit ${code}): ${io.err}`);
  return { code, report: JSON.parse(io.out) as DoctorReport, err: io.err };
}

function findingsOf(run: DoctorRun, check: string): Finding[] {
  return run.report.findings.filter((f) => f.check === check);
}

/** Produces to partition 0 of `topic` until `work` settles, so the high watermark moves throughout doctor's window. */
async function whileProducing<T>(bootstrapServers: string, topic: string, work: () => Promise<T>): Promise<T> {
  const producer = new Producer({ bootstrapServers, acks: 1, lingerMs: 0 });
  let done = false;
  const producing = (async () => {
    for (let i = 0; !done; i++) await producer.send({ topic, partition: 0, value: `more-${i}` });
  })();
  try {
    return await work();
  } finally {
    done = true;
    await producing;
    await producer.close();
  }
}

describe('one broker', () => {
  let dir: string;
  let running: RunningBroker;
  let admin: Admin;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'spool-doctor-'));
    running = await startBroker({ config: { 'log.dirs': dir, 'node.id': 1 }, logger: silentLogger });
    admin = new Admin({ bootstrapServers: running.bootstrapServers });
  });

  after(async () => {
    await admin.close();
    await running.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('a healthy broker: no finding, exit code 0, and the text output says so', async () => {
    await admin.createTopics([{ name: 'healthy', numPartitions: 2, replicationFactor: 1 }]);
    const producer = new Producer({ bootstrapServers: running.bootstrapServers });
    for (let i = 0; i < 5; i++) await producer.send({ topic: 'healthy', partition: i % 2, value: `v${i}` });
    await producer.close();
    await admin.alterConsumerGroupOffsets('healthy-readers', [{ topic: 'healthy', partition: 0, offset: 3 }, { topic: 'healthy', partition: 1, offset: 2 }]);

    const run = await doctor(running.bootstrapServers, '--topic', 'healthy', '--group', 'healthy-readers');
    assert.deepEqual(run.report.findings, []);
    assert.equal(run.code, 0);
    assert.ok(run.report.gaps.some((gap) => gap.startsWith('client quotas')), 'the gaps say that Spool has no client quotas');

    const io = testIo();
    assert.equal(await runCli(['doctor', '--bootstrap-server', running.bootstrapServers, '--sample-ms', SAMPLE_MS, '--topic', 'healthy'], io), 0);
    assert.match(io.out, /^No problems found \(watched for 300 ms\)\.$/m);
  });

  test('an open transaction holding the last stable offset: its producer id, transactional id and age, and the read_committed group it holds back', async () => {
    await admin.createTopics([{ name: 'held', numPartitions: 1, replicationFactor: 1 }]);
    const plain = new Producer({ bootstrapServers: running.bootstrapServers });
    await plain.send({ topic: 'held', partition: 0, value: 'committed' });
    const producer = new Producer({ bootstrapServers: running.bootstrapServers, transactionalId: 'doctor-stuck-txn' });
    const reader = new Consumer({ bootstrapServers: running.bootstrapServers, groupId: 'held-readers', isolationLevel: 'read_committed', autoOffsetReset: 'earliest', enableAutoCommit: false });
    try {
      await producer.initTransactions();
      producer.beginTransaction();
      await producer.send({ topic: 'held', partition: 0, value: 'never committed' });
      await plain.send({ topic: 'held', partition: 0, value: 'after the open transaction' });
      // A read_committed reader gets only offset 0 and commits up to the last stable offset: its lag is held there.
      reader.subscribe(['held']);
      await until('the reader has committed up to the last stable offset', async () => {
        if ((await reader.poll(100)).length > 0) await reader.commitSync();
        return (await reader.committed([{ topic: 'held', partition: 0 }]))[0]?.offset === 1 ? true : null;
      }, WAIT);

      const run = await whileProducing(running.bootstrapServers, 'held', () => doctor(running.bootstrapServers, '--topic', 'held', '--group', 'held-readers'));
      const [lag, ...otherLags] = findingsOf(run, 'consumer-lag');
      assert.equal(otherLags.length, 0);
      assert.equal(lag?.subject, 'group held-readers');
      assert.equal(lag.evidence.cause, 'held-by-transaction');
      assert.match(String(lag.evidence.partitions), /^held-0:committed=1->1,highWatermark=\d+->\d+$/);
      const [finding, ...others] = findingsOf(run, 'open-transaction');
      assert.equal(others.length, 0);
      assert.equal(finding?.subject, 'held-0');
      const producers = await admin.describeProducers({ topic: 'held', partition: 0 });
      const open = producers.find((p) => p.currentTransactionStartOffset !== null)!;
      assert.equal(finding.evidence.producerId, open.producerId);
      assert.equal(finding.evidence.lastStableOffset, 1, 'the transaction opened at offset 1');
      assert.equal(finding.evidence.transactionalId, 'doctor-stuck-txn');
      assert.equal(finding.evidence.transactionState, 'Ongoing');
      assert.equal(finding.evidence.highWatermarkMoved, true);
      assert.ok(typeof finding.evidence.ageMs === 'number' && finding.evidence.ageMs >= 0);
      assert.equal(run.code, 2);
    } finally {
      await reader.close();
      await producer.abortTransaction().catch(() => undefined);
      await producer.close();
      await plain.close();
    }
  });

  test('lag that grows in a group with no members', async () => {
    await admin.createTopics([{ name: 'unread', numPartitions: 1, replicationFactor: 1 }]);
    const producer = new Producer({ bootstrapServers: running.bootstrapServers });
    for (let i = 0; i < 5; i++) await producer.send({ topic: 'unread', partition: 0, value: `v${i}` });
    await producer.close();
    await admin.alterConsumerGroupOffsets('gone-readers', [{ topic: 'unread', partition: 0, offset: 2 }]);

    const run = await whileProducing(running.bootstrapServers, 'unread', () => doctor(running.bootstrapServers, '--topic', 'unread', '--group', 'gone-readers'));
    const [finding, ...others] = findingsOf(run, 'consumer-lag');
    assert.equal(others.length, 0);
    assert.equal(finding?.subject, 'group gone-readers');
    assert.equal(finding.evidence.cause, 'no-members');
    assert.equal(finding.evidence.members, 0);
    assert.match(String(finding.evidence.partitions), /^unread-0:committed=2->2,highWatermark=\d+->\d+$/);
    assert.equal(run.code, 2);
  });

  test('commits that stall while the group is Stable: the member holding the partition is named', async () => {
    await admin.createTopics([{ name: 'stalled', numPartitions: 1, replicationFactor: 1 }]);
    const producer = new Producer({ bootstrapServers: running.bootstrapServers });
    for (let i = 0; i < 5; i++) await producer.send({ topic: 'stalled', partition: 0, value: `v${i}` });
    await producer.close();
    await admin.alterConsumerGroupOffsets('stalled-readers', [{ topic: 'stalled', partition: 0, offset: 2 }]);
    const consumer = new Consumer({ bootstrapServers: running.bootstrapServers, groupId: 'stalled-readers', clientId: 'stuck-reader', enableAutoCommit: false });
    try {
      consumer.subscribe(['stalled']);
      await until('the consumer holds the partition', async () => ((await consumer.poll(100)).length > 0 || consumer.assignment().length > 0 ? true : null), WAIT);
      await until('the group is Stable', async () => ((await admin.describeConsumerGroups(['stalled-readers']))[0]?.groupState === 'Stable' ? true : null), WAIT);

      const run = await whileProducing(running.bootstrapServers, 'stalled', () => doctor(running.bootstrapServers, '--topic', 'stalled', '--group', 'stalled-readers'));
      const [finding, ...others] = findingsOf(run, 'consumer-lag');
      assert.equal(others.length, 0);
      assert.equal(finding?.subject, 'group stalled-readers');
      assert.equal(finding.evidence.cause, 'commits-stalled');
      assert.equal(finding.evidence.state, 'Stable');
      assert.equal(finding.evidence.members, 1);
      assert.match(String(finding.evidence.partitions), /^stalled-0:committed=2->2,highWatermark=\d+->\d+$/);
      const memberId = consumer.groupMetadata().memberId;
      assert.equal(String(finding.evidence.assignedTo), `stalled-0:${memberId}(client=stuck-reader,host=${(await admin.describeConsumerGroups(['stalled-readers']))[0]!.members[0]!.host})`);
      assert.equal(run.code, 2);
    } finally {
      await consumer.close();
    }
  });

  test('slow consumers: the committed offset moves, but slower than the high watermark', async () => {
    await admin.createTopics([{ name: 'slow', numPartitions: 1, replicationFactor: 1 }]);
    const producer = new Producer({ bootstrapServers: running.bootstrapServers, lingerMs: 0 });
    const consumer = new Consumer({ bootstrapServers: running.bootstrapServers, groupId: 'slow-readers', clientId: 'slow-reader', enableAutoCommit: false, autoOffsetReset: 'earliest', maxPollRecords: 1 });
    let done = false;
    // Each round writes four records and the consumer reads and commits one: lag grows while commits move.
    const round = async () => {
      for (let i = 0; i < 4; i++) await producer.send({ topic: 'slow', partition: 0, value: `v${i}` });
      if ((await consumer.poll(100)).length > 0) await consumer.commitSync();
    };
    try {
      consumer.subscribe(['slow']);
      await until('the consumer has committed', async () => (await round(), (await consumer.committed([{ topic: 'slow', partition: 0 }]))[0] ?? null), WAIT);
      const rounds = (async () => {
        while (!done) await round();
      })();
      const run = await doctor(running.bootstrapServers, '--topic', 'slow', '--group', 'slow-readers').finally(() => (done = true));
      await rounds;
      const [finding, ...others] = findingsOf(run, 'consumer-lag');
      assert.equal(others.length, 0);
      assert.equal(finding?.subject, 'group slow-readers');
      assert.equal(finding.evidence.cause, 'slow-consumers');
      const [, committedBefore, committedAfter] = /^slow-0:committed=(\d+)->(\d+),highWatermark=\d+->\d+$/.exec(String(finding.evidence.partitions))!;
      assert.ok(Number(committedAfter) > Number(committedBefore), 'the committed offset moved');
      assert.match(String(finding.evidence.assignedTo), new RegExp(`^slow-0:${consumer.groupMetadata().memberId}\\(client=slow-reader,`));
      assert.equal(run.code, 2);
    } finally {
      done = true;
      await consumer.close();
      await producer.close();
    }
  });

  test('a rebalance that does not finish: a member that stops polling keeps the group in PreparingRebalance', async () => {
    await admin.createTopics([{ name: 'rebalanced', numPartitions: 2, replicationFactor: 1 }]);
    const options = { bootstrapServers: running.bootstrapServers, groupId: 'stuck-rebalance', enableAutoCommit: false, rebalanceTimeoutMs: 120_000, sessionTimeoutMs: 60_000 };
    const busy = new Consumer({ ...options, clientId: 'busy-reader' });
    const joining = new Consumer({ ...options, clientId: 'new-reader' });
    let joiningPoll: Promise<unknown> | null = null;
    try {
      busy.subscribe(['rebalanced']);
      await until('the first member holds both partitions', async () => (await busy.poll(100), busy.assignment().length === 2 ? true : null), WAIT);
      // busy-reader polls no more (as a consumer stuck in its processing): it never rejoins.
      joining.subscribe(['rebalanced']);
      // Long enough to send its JoinGroup, short enough that the cleanup does not wait it out.
      joiningPoll = joining.poll(5_000);
      await until('the group is in PreparingRebalance', async () => ((await admin.describeConsumerGroups(['stuck-rebalance']))[0]?.groupState === 'PreparingRebalance' ? true : null), WAIT);

      const run = await doctor(running.bootstrapServers, '--topic', 'rebalanced', '--group', 'stuck-rebalance');
      const [finding, ...others] = findingsOf(run, 'rebalance');
      assert.equal(others.length, 0);
      assert.equal(finding?.subject, 'group stuck-rebalance');
      assert.equal(finding.evidence.state, 'PreparingRebalance->PreparingRebalance');
      assert.match(finding.message, /waits for every member to rejoin/);
      const members = (finding.evidence.members as string[]).join(' ');
      assert.match(members, new RegExp(`${busy.groupMetadata().memberId}\\(client=busy-reader,`));
      assert.match(members, /client=new-reader,/);
      assert.equal(run.code, 2);
    } finally {
      await busy.close();
      await joiningPoll;
      await joining.close();
    }
  });

  test('a rebalance held in CompletingRebalance: the leader joined but never sends SyncGroup', async () => {
    await admin.createTopics([{ name: 'unsynced', numPartitions: 2, replicationFactor: 1 }]);
    const client = await WireClient.connect(running.bootstrapServers);
    try {
      await call(client, FindCoordinator, 4, { keyType: 0, coordinatorKeys: ['unsynced-group'] });
      // Timeouts long enough that the coordinator neither expires the member nor gives up waiting for its SyncGroup.
      const join = (memberId: string) => call(client, JoinGroup, 9, {
        groupId: 'unsynced-group',
        sessionTimeoutMs: 120_000,
        rebalanceTimeoutMs: 120_000,
        memberId,
        protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: encodeSubscription({ topics: ['unsynced'] }) }],
      });
      const first = await join('');
      assert.equal(first.errorCode, ErrorCode.MEMBER_ID_REQUIRED);
      const joined = await join(first.memberId);
      assert.equal(joined.errorCode, ErrorCode.NONE);
      assert.equal(joined.leader, first.memberId, 'the only member leads: the assignment is its to send');
      await until('the group is in CompletingRebalance', async () => ((await admin.describeConsumerGroups(['unsynced-group']))[0]?.groupState === 'CompletingRebalance' ? true : null), WAIT);

      const run = await doctor(running.bootstrapServers, '--topic', 'unsynced', '--group', 'unsynced-group');
      const [finding, ...others] = findingsOf(run, 'rebalance');
      assert.equal(others.length, 0);
      assert.equal(finding?.subject, 'group unsynced-group');
      assert.equal(finding.evidence.state, 'CompletingRebalance->CompletingRebalance');
      assert.match(finding.message, /waits for the leader's SyncGroup/);
      assert.match((finding.evidence.members as string[]).join(' '), new RegExp(`^${first.memberId}\\(client=spool-test,`));
      assert.equal(run.code, 2);
    } finally {
      client.close();
    }
  });

  test('a KIP-848 member that does not reconcile: it keeps heartbeating the partitions it must give up, and the member waiting for them is named', async () => {
    await admin.createTopics([{ name: 'reconciled', numPartitions: 2, replicationFactor: 1 }]);
    const topicId = (await admin.describeTopics(['reconciled']))[0]!.topicId;
    const holder = await WireClient.connect(running.bootstrapServers);
    const newcomer = await WireClient.connect(running.bootstrapServers);
    const heartbeat = (client: WireClient, body: { memberId: string; memberEpoch: number; partitions: number[] }) => call(client, ConsumerGroupHeartbeat, 1, {
      groupId: 'unreconciled',
      memberId: body.memberId,
      memberEpoch: body.memberEpoch,
      rebalanceTimeoutMs: 120_000,
      subscribedTopicNames: ['reconciled'],
      // Joining (epoch 0) sends no owned partitions at all, as Kafka requires.
      topicPartitions: body.partitions.length === 0 ? [] : [{ topicId, partitions: body.partitions }],
    });
    try {
      await call(holder, FindCoordinator, 4, { keyType: 0, coordinatorKeys: ['unreconciled'] });
      const joined = await heartbeat(holder, { memberId: 'holder', memberEpoch: 0, partitions: [] });
      assert.deepEqual([joined.errorCode, joined.assignment?.topicPartitions], [ErrorCode.NONE, [{ topicId, partitions: [0, 1] }]]);
      await heartbeat(holder, { memberId: 'holder', memberEpoch: joined.memberEpoch, partitions: [0, 1] });
      const second = await heartbeat(newcomer, { memberId: 'newcomer', memberEpoch: 0, partitions: [] });
      assert.equal(second.errorCode, ErrorCode.NONE);
      // The holder is told to give one partition up, and answers as if it still owned both, as a consumer stuck in its revocation callback.
      await until('the holder is asked to revoke and stays at its epoch', async () => {
        const beat = await heartbeat(holder, { memberId: 'holder', memberEpoch: joined.memberEpoch, partitions: [0, 1] });
        assert.equal(beat.errorCode, ErrorCode.NONE);
        return beat.memberEpoch === joined.memberEpoch && (beat.assignment?.topicPartitions[0]?.partitions.length ?? 2) < 2 ? true : null;
      }, WAIT);

      const run = await doctor(running.bootstrapServers, '--topic', 'reconciled', '--group', 'unreconciled');
      const [finding, ...others] = findingsOf(run, 'rebalance');
      assert.equal(others.length, 0, `one finding, about the member that does not reconcile: ${JSON.stringify(run.report.findings)}`);
      assert.equal(finding?.subject, 'group unreconciled');
      assert.equal(finding.evidence.memberId, 'holder');
      assert.equal(finding.evidence.memberEpoch, joined.memberEpoch);
      assert.equal(finding.evidence.targetAssignmentEpoch, second.memberEpoch);
      assert.match(String(finding.evidence.waitingMembers), /^newcomer:reconciled-[01]$/);
      assert.equal(run.code, 2);
    } finally {
      holder.close();
      newcomer.close();
    }
  });
});

test('a log directory taken offline by a disk error: the directory, the replica lost with it, and its KAFKA_STORAGE_ERROR', async () => {
  // A real node on real sockets and clock, over the simulated disk that can fail one directory's writes.
  const fs = new SimFileSystem(new SeededRandom(17), realClock);
  const running = await startBroker({ env: { ...realEnv, fs }, config: { 'node.id': 1, 'log.dirs': '/disk-a,/disk-b', 'metadata.log.dir': '/disk-meta' }, logger: silentLogger });
  const admin = new Admin({ bootstrapServers: running.bootstrapServers });
  const client = await WireClient.connect(running.bootstrapServers);
  try {
    await admin.createTopics([{ name: 'spread', numPartitions: 2, replicationFactor: 1 }]);
    const dirOf = async (partition: number) => (await admin.describeLogDirs(1)).find((d) => d.replicas.some((r) => r.topic === 'spread' && r.partition === partition))?.logDir ?? null;
    const [failing, healthy] = [await dirOf(0), await dirOf(1)];
    assert.ok(failing !== null && healthy !== null && failing !== healthy, 'one partition in each directory');
    fs.injectFault({ operation: 'write', code: 'EIO', pathIncludes: `${failing}/` });
    const produced = await call(client, Produce, 9, produceBody('spread', buildBatch({ records: [{ value: 'lost' }] })));
    assert.equal(produced.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.KAFKA_STORAGE_ERROR, 'the write that fails takes the directory offline');
    await until('DescribeLogDirs reports the directory offline', async () => ((await admin.describeLogDirs(1)).find((d) => d.logDir === failing)?.errorCode === ErrorCode.KAFKA_STORAGE_ERROR ? true : null), WAIT);

    const run = await doctor(running.bootstrapServers, '--topic', 'spread');
    const [finding, ...others] = findingsOf(run, 'offline-log-dir');
    assert.equal(others.length, 0);
    assert.equal(finding?.subject, 'broker 1');
    assert.equal(finding.severity, 'critical');
    assert.equal(finding.evidence.logDir, failing);
    assert.equal(finding.evidence.error, 'KAFKA_STORAGE_ERROR');
    assert.deepEqual(finding.evidence.onlineLogDirs, [healthy]);
    assert.deepEqual(finding.evidence.replicas, ['spread-0']);
    assert.deepEqual(finding.evidence.ledReplicas, ['spread-0'], 'the broker still leads it (the controller is not told) and answers KAFKA_STORAGE_ERROR');
    assert.equal(run.code, 2);
  } finally {
    client.close();
    await admin.close();
    await running.stop();
  }
});

/** The controller-only node's `host:port`, for --bootstrap-controller. */
function controllerAddress(cluster: RunningCluster, nodeId: number): string {
  const listener = cluster.node(nodeId).node.listeners.find((l) => l.name === 'CONTROLLER')!;
  return `${listener.advertisedHost}:${listener.advertisedPort}`;
}

test('two brokers, one stopped: ISR below min.insync.replicas, under-replicated, the broker fenced', async () => {
  const cluster = await startCluster({ controllers: 1, brokers: 2, config: { 'auto.leader.rebalance.enable': false } });
  const admin = new Admin({ bootstrapServers: cluster.bootstrapServers });
  try {
    await admin.createTopics([{ name: 'guarded', numPartitions: 1, replicationFactor: 2, configs: { 'min.insync.replicas': '2' } }]);
    await until('the ISR holds both', async () => (partitionOf(cluster, 'guarded')?.isr.length === 2 ? true : null), WAIT);
    const leader = partitionOf(cluster, 'guarded')!.leader;
    const stopped = leader === 0 ? 1 : 0;
    await cluster.node(stopped).stop();
    await until('the stopped broker leaves the ISR', async () => (partitionOf(cluster, 'guarded')?.isr.includes(stopped) === false ? true : null), WAIT);

    const run = await doctor(cluster.nodes.find((n) => n.nodeId === leader)!.bootstrapServer!, '--topic', 'guarded', '--bootstrap-controller', controllerAddress(cluster, 3000));
    const [minIsr] = findingsOf(run, 'min-insync-replicas');
    assert.equal(minIsr?.subject, 'guarded-0');
    assert.equal(minIsr.severity, 'critical');
    assert.deepEqual(minIsr.evidence.isr, [leader]);
    assert.equal(minIsr.evidence.minInsyncReplicas, 2);
    assert.deepEqual(findingsOf(run, 'under-replicated').map((f) => [f.subject, f.evidence.outOfSync]), [['guarded-0', [stopped]]]);
    assert.deepEqual(findingsOf(run, 'fenced-broker').map((f) => f.subject), [`broker ${stopped}`]);
    assert.deepEqual(findingsOf(run, 'controller-quorum'), [], 'the quorum has its leader');
    assert.equal(run.code, 2);
  } finally {
    await admin.close();
    await cluster.stop();
  }
});

test('a controller quorum without a leader: two of three controllers killed, the leader resigns, and doctor names the controllers that do not answer', async () => {
  const cluster = await startCluster({ controllers: 3, brokers: 1 });
  try {
    const controllers = [3000, 3001, 3002];
    const leader = cluster.node(3000).node.shared.raft.leaderAndEpoch.leaderId!;
    assert.ok(controllers.includes(leader), 'the quorum has elected one of them');
    const killed = controllers.filter((id) => id !== leader);
    for (const id of killed) await cluster.node(id).kill();
    // The leader resigns once a majority of voters has not fetched for 1.5 x controller.quorum.fetch.timeout.ms, and no election can succeed.
    await until('the last controller knows no leader', async () => (cluster.node(leader).node.shared.raft.leaderAndEpoch.leaderId === null ? true : null), WAIT);

    const run = await doctor(cluster.bootstrapServers, '--bootstrap-controller', controllerAddress(cluster, leader));
    const [finding, ...others] = findingsOf(run, 'controller-quorum');
    assert.equal(others.length, 0);
    assert.equal(finding?.subject, 'quorum');
    assert.equal(finding.severity, 'critical');
    assert.equal(finding.evidence.controllerId, -1);
    assert.deepEqual(finding.evidence.controllers, controllers);
    assert.deepEqual(finding.evidence.unreachableControllers, killed);
    assert.equal(finding.evidence.majority, 2);
    assert.match(finding.message, /the quorum has no leader \(1 of 3 controllers answer, a majority is 2; not answering: \d+, \d+\)/);
    assert.equal(run.code, 2);
  } finally {
    for (const node of cluster.nodes) await node.kill();
    await cluster.stop();
  }
});

test('a replication throttle holding a follower back: the leader\'s rate, the partition it keeps out of the ISR', async () => {
  const [leader, follower] = [0, 1] as const;
  // One fetch carries at most 64 KiB of the partition: the follower needs several, and the throttle withholds them.
  const cluster = await startCluster({ controllers: 1, brokers: 2, config: { 'auto.leader.rebalance.enable': false, 'replica.fetch.max.bytes': 65_536 } });
  const admin = new Admin({ bootstrapServers: cluster.bootstrapServers });
  try {
    const throttled = { 'leader.replication.throttled.replicas': `0:${leader}`, 'follower.replication.throttled.replicas': `0:${follower}` };
    await admin.createTopics([{ name: 'throttled', replicaAssignment: { 0: [leader, follower] }, configs: throttled }]);
    await until('the ISR holds both', async () => (partitionOf(cluster, 'throttled')?.isr.length === 2 ? true : null), WAIT);
    await cluster.node(follower).stop();
    await until('the stopped follower leaves the ISR', async () => (partitionOf(cluster, 'throttled')?.isr.includes(follower) === false ? true : null), WAIT);
    const producer = new Producer({ bootstrapServers: cluster.node(leader).bootstrapServer!, acks: 1 });
    for (let i = 0; i < 60; i++) await producer.send({ topic: 'throttled', partition: 0, value: `${i}:${'x'.repeat(4000)}` });
    await producer.close();
    // 1 kB/s: once the first 64 KiB fetch is in the leader's rate (quota.window.num x quota.window.size.seconds), it withholds the rest for about a minute.
    await admin.alterConfigs([{ type: 'broker', name: String(leader), ops: [{ name: 'leader.replication.throttled.rate', op: 'set', value: '1000' }] }]);
    await until('the leader applies the rate', async () => (cluster.node(leader).node.replicaManager.leaderQuota.upperBound === 1000 ? true : null), WAIT);
    await cluster.node(follower).start();
    const leaderLogEnd = hosted(cluster, leader, 'throttled')!.log.logEndOffset;
    await until('the follower has fetched part of the log', async () => ((hosted(cluster, follower, 'throttled')?.log.logEndOffset ?? 0) > 0 ? true : null), WAIT);

    const run = await doctor(cluster.node(leader).bootstrapServer!, '--topic', 'throttled');
    assert.ok(hosted(cluster, follower, 'throttled')!.log.logEndOffset < leaderLogEnd, 'the follower was still behind when doctor looked');
    const [finding, ...others] = findingsOf(run, 'replication-throttle');
    assert.equal(others.length, 0);
    assert.equal(finding?.subject, `broker ${leader}`);
    assert.equal(finding.severity, 'warning');
    assert.equal(finding.evidence.leaderReplicationThrottledRate, '1000');
    assert.deepEqual(finding.evidence.throttledTopics, ['throttled']);
    assert.deepEqual(finding.evidence.heldBackAsLeader, ['throttled-0']);
    assert.deepEqual(finding.evidence.heldBackAsFollower, [], 'the follower has no rate of its own');
    assert.match(finding.message, /slows their catch-up \(throttled-0\)/);
    assert.deepEqual(findingsOf(run, 'under-replicated').map((f) => [f.subject, f.evidence.outOfSync]), [['throttled-0', [follower]]]);
    assert.equal(run.code, 2);
  } finally {
    await admin.close();
    // A clean stop would wait on the throttled follower's fetches.
    for (const node of cluster.nodes) await node.kill();
    await cluster.stop();
  }
});

/** A port free at the moment (console.listener must name a real one: DescribeConfigs shows the configured value, and port 0 is not advertised). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function followerHoldingTheHighWatermark(options: { console: boolean }): Promise<void> {
  // Replicas [0, 1, 2]: broker 0 leads, follower 1 is killed. Only the leader serves a console: a killed
  // embedded node's console listener stays open (node:http is outside the killable env), which would hold the test process.
  const [leader, follower, other] = [0, 1, 2] as const;
  const consolePorts = new Map<number, number>();
  if (options.console) consolePorts.set(leader, await freePort());
  // Long enough that the killed follower stays registered, unfenced and in the ISR for the whole test.
  const cluster = await startCluster({
    controllers: 1,
    brokers: 3,
    config: { 'replica.lag.time.max.ms': 600_000, 'broker.session.timeout.ms': 600_000, 'auto.leader.rebalance.enable': false },
    nodeConfig: (nodeId) => (consolePorts.has(nodeId) ? { 'console.listener': `http://127.0.0.1:${consolePorts.get(nodeId)}` } : {}),
  });
  const admin = new Admin({ bootstrapServers: cluster.bootstrapServers });
  try {
    await admin.createTopics([{ name: 'copied', replicaAssignment: { 0: [leader, follower, other] } }]);
    await until('the ISR holds all three', async () => (partitionOf(cluster, 'copied')?.isr.length === 3 ? true : null), WAIT);
    assert.equal(partitionOf(cluster, 'copied')!.leader, leader, 'the first replica leads');
    await cluster.node(follower).kill();
    const producer = new Producer({ bootstrapServers: cluster.node(leader).bootstrapServer!, acks: 1 });
    for (let i = 0; i < 3; i++) await producer.send({ topic: 'copied', partition: 0, value: `v${i}` });
    await producer.close();
    await until('the live follower has the records', async () => (hosted(cluster, other, 'copied')?.log.logEndOffset === 3 ? true : null), WAIT);

    const run = await doctor(cluster.node(leader).bootstrapServer!, '--topic', 'copied');
    const [finding, ...others] = findingsOf(run, 'stuck-high-watermark');
    assert.equal(others.length, 0);
    assert.equal(finding?.subject, 'copied-0');
    assert.deepEqual(finding.evidence.laggingFollowers, [follower]);
    assert.equal(finding.evidence.leader, leader);
    assert.match(String(finding.evidence.highWatermark), /^(\d+)->\1$/, 'the high watermark did not move');
    const consoleGap = run.report.gaps.filter((gap) => gap.includes('needs console.listener'));
    if (options.console) {
      assert.match(String(finding.evidence.followers), new RegExp(`^${follower}:logEndOffset=(-1|0),.*\\(leader's view\\)$`));
      assert.deepEqual(consoleGap, []);
    } else {
      assert.equal(String(finding.evidence.followers), `${follower}:unreachable(BROKER_NOT_AVAILABLE)`);
      assert.equal(consoleGap.length, 1, 'the report says the leader\'s view needs console.listener');
    }
    assert.deepEqual(findingsOf(run, 'unreachable-broker').map((f) => f.subject), [`broker ${follower}`]);
    assert.equal(run.code, 2);
  } finally {
    await admin.close();
    // A clean stop of the others waits on the killed broker's session: they are killed too.
    for (const node of cluster.nodes) await node.kill();
    await cluster.stop();
  }
}

test('a follower that stopped fetching while in the ISR: the high watermark is stuck, and the leader\'s console view names the follower', () =>
  followerHoldingTheHighWatermark({ console: true }));

test('the same without console.listener: the followers\' own log ends name it, and the gap is reported', () =>
  followerHoldingTheHighWatermark({ console: false }));
