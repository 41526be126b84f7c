/**
 * Crash safety of a whole node, randomized: a seeded workload drives one
 * broker on the simulated disk (metadata log and snapshots, topic creation,
 * idempotent and plain produce with segment rolls and producer snapshots,
 * leader-epoch, recovery-point and high-watermark checkpoints, offset
 * commits into `__consumer_offsets`, time passing) with
 * log.flush.interval.messages=1, and the power is cut at a chosen file-system
 * call; unsynced writes are dropped (a random prefix kept, the last one torn).
 * A new node then starts on what was fsynced (in a quarter of the points
 * the power goes again during that start, and the node after it must
 * start all the same). It must start, and
 *   - every topic whose creation was acknowledged exists, with its partitions;
 *   - every acknowledged batch is in its log at its offset, unchanged, and
 *     each log reads as whole, contiguous batches (a third of the topics
 *     leave flushing to the OS: their unsynced tail may go, never change);
 *   - every acknowledged offset commit is fetched back (or the commit that was
 *     in flight at the cut, if it survived);
 *   - the retry of the idempotent batch in flight at the cut is acknowledged
 *     and the log holds no sequence twice;
 *   - new appends are acknowledged.
 * The same points with a disk error (EIO at that call) instead: the node
 * must stop by itself (its only log directory went offline), and after the
 * power goes and it restarts, the same holds; a failed write is never
 * acknowledged, so its retry is never a duplicate.
 * Each workload seed is first run without a cut to count its calls; its cut
 * points spread over them. SPOOL_CRASH_POINTS sets how many points run (a
 * bounded number by default, for CI's time budget); SPOOL_CRASH_SEED the
 * first seed. A failure prints the seed and call number to replay it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SeededRandom } from '../../src/io/env.js';
import { SimFileSystem } from '../../src/io/sim-fs.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/records.js';
import { iterateBatches, readBatchHeader } from '../../src/protocol/records/batch.js';
import { CONSUMER_OFFSETS_TOPIC } from '../../src/group/placement.js';
import type { SpoolNode } from '../../src/node/node.js';
import { settle, simBroker, startNode, type SimNode } from './sim-broker.js';

const POINTS = Number(process.env.SPOOL_CRASH_POINTS ?? 200);
const FIRST_SEED = Number(process.env.SPOOL_CRASH_SEED ?? 0x5eed);
const FAULT_POINTS = Math.ceil(POINTS / 2);
const POINTS_PER_WORKLOAD = 8;
/** Roughly the calls of a start on a small disk: a second cut falls within it or not at all. */
const STARTUP_CALLS_MAX = 300;
const CONFIG = {
  'log.flush.interval.messages': 1,
  'log.segment.bytes': 1500,
  'offsets.topic.num.partitions': 2,
  'metadata.log.segment.bytes': 2000,
  'metadata.log.max.record.bytes.between.snapshots': 1500,
};
const GROUPS = ['g0', 'g1', 'g2'];

interface AckedBatch {
  topic: string;
  partition: number;
  offset: number;
  crc: number;
  /** Fsynced before the answer (flush.messages=1), or by a clean stop since: it must survive. */
  durable: boolean;
}

interface IdempotentSend {
  topic: string;
  partition: number;
  records: Buffer;
}

/** What the workload was told, and what was in flight when the power went. */
interface Expectations {
  topics: Map<string, number>;
  /** Topics left to the page cache (flush.messages above any count the workload reaches). */
  lazyTopics: Set<string>;
  batches: AckedBatch[];
  commits: Map<string, number>;
  /** A commit whose answer never came: either value may be fetched back. */
  commitInFlight: { key: string; offset: number } | null;
  produceInFlight: IdempotentSend | null;
  /** Next sequence per idempotent producer (one per partition). */
  sequences: Map<string, number>;
}

const commitKey = (group: string, topic: string, partition: number) => `${group}/${topic}/${partition}`;
const producerIdOf = (topic: string, partition: number) => 1000 + Number(topic.slice(1)) * 10 + partition;

async function createTopic(node: SimNode, expected: Expectations, random: SeededRandom): Promise<boolean> {
  const name = `t${expected.topics.size}`;
  const partitions = 1 + random.nextInt(2);
  const lazy = random.nextInt(3) === 0;
  const configs = lazy ? [{ name: 'flush.messages', value: '1000000' }] : [];
  const [result] = await node.broker.controller.createTopics([{ name, numPartitions: partitions, replicationFactor: 1, assignments: [], configs }], {
    validateOnly: false,
  });
  if (result?.errorCode !== ErrorCode.NONE) return false;
  expected.topics.set(name, partitions);
  if (lazy) expected.lazyTopics.add(name);
  return true;
}

function pickPartition(expected: Expectations, random: SeededRandom): { topic: string; partition: number } | null {
  const topics = [...expected.topics];
  if (topics.length === 0) return null;
  const [topic, partitions] = topics[random.nextInt(topics.length)]!;
  return { topic, partition: random.nextInt(partitions) };
}

async function produce(node: SimNode, expected: Expectations, random: SeededRandom): Promise<boolean> {
  const target = pickPartition(expected, random);
  if (target === null) return true;
  const key = `${target.topic}-${target.partition}`;
  const idempotent = random.nextInt(3) !== 0;
  const sequence = expected.sequences.get(key) ?? 0;
  const count = 1 + random.nextInt(4);
  const records = buildBatch({
    records: Array.from({ length: count }, (_, i) => ({ key: `k${i}`, value: random.bytes(random.nextInt(300)), timestamp: node.clock.nowMs() })),
    ...(idempotent ? { producerId: producerIdOf(target.topic, target.partition), producerEpoch: 0, baseSequence: sequence } : {}),
  });
  if (idempotent) expected.produceInFlight = { ...target, records: Buffer.from(records) };
  const result = await appendOne(node.broker, target, records);
  if (result.errorCode !== ErrorCode.NONE) return false;
  expected.produceInFlight = null;
  if (idempotent) expected.sequences.set(key, sequence + count);
  expected.batches.push({ ...target, offset: result.baseOffset, crc: readBatchHeader(records, 0).crc, durable: !expected.lazyTopics.has(target.topic) });
  return true;
}

async function appendOne(broker: SpoolNode, target: { topic: string; partition: number }, records: Buffer) {
  const results = await broker.replicaManager.appendRecords({
    timeoutMs: 1000,
    requiredAcks: -1,
    internalTopicsAllowed: false,
    entries: [{ topicPartition: target, records }],
  });
  return results.get(`${target.topic}-${target.partition}`)!;
}

async function commit(node: SimNode, expected: Expectations, random: SeededRandom): Promise<boolean> {
  const target = pickPartition(expected, random);
  if (target === null) return true;
  const group = GROUPS[random.nextInt(GROUPS.length)]!;
  const offset = random.nextInt(1000);
  const key = commitKey(group, target.topic, target.partition);
  expected.commitInFlight = { key, offset };
  const errorCode = await commitOnce(node, group, target, offset);
  if (errorCode !== ErrorCode.NONE) return false;
  expected.commitInFlight = null;
  expected.commits.set(key, offset);
  return true;
}

/** One OffsetCommit, retried (as a client does) while the coordinator is still loading after a start. */
async function commitOnce(node: SimNode, group: string, target: { topic: string; partition: number }, offset: number): Promise<number | undefined> {
  for (;;) {
    const errorCode = await commitRequest(node, group, target, offset);
    if (errorCode !== ErrorCode.COORDINATOR_LOAD_IN_PROGRESS) return errorCode;
    await settle(node.clock, 1);
  }
}

async function commitRequest(node: SimNode, group: string, target: { topic: string; partition: number }, offset: number): Promise<number | undefined> {
  const response = await node.broker.groupCoordinator.commitOffsets(
    {
      groupId: group,
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      retentionTimeMs: -1,
      topics: [{ name: target.topic, partitions: [{ partitionIndex: target.partition, committedOffset: offset, committedLeaderEpoch: -1, committedMetadata: null }] }],
    },
    8,
  );
  return response[0]?.partitions[0]?.errorCode;
}

/**
 * Runs the workload until it ends or the power goes; any failure while the
 * power is on is a bug. Returns the expectations and the node last running
 * (a clean restart in the middle replaces it).
 */
async function workload(first: SimNode, fs: SimFileSystem, seed: number): Promise<{ expected: Expectations; node: SimNode }> {
  const diskFailed = () => fs.isPoweredOff || fs.faultsFired > 0;
  const random = new SeededRandom(seed);
  let node = first;
  const expected: Expectations = {
    topics: new Map(),
    lazyTopics: new Set(),
    batches: [],
    commits: new Map(),
    commitInFlight: null,
    produceInFlight: null,
    sequences: new Map(),
  };
  const steps = 10 + random.nextInt(70);
  const run = async (what: string, operation: () => Promise<boolean>) => {
    let ok: boolean;
    try {
      ok = await operation();
    } catch (error) {
      if (!diskFailed()) throw error;
      ok = false;
    }
    assert.ok(ok || diskFailed(), `${what} failed while the disk worked`);
    return ok;
  };
  if (!(await run('start', async () => (await startNode(node), true)))) return { expected, node };
  const offsets = await run('creating __consumer_offsets', async () => (await node.broker.brokerServer!.autoCreateTopics([CONSUMER_OFFSETS_TOPIC]))[0]?.errorCode === ErrorCode.NONE);
  if (!offsets) return { expected, node };
  for (let step = 0; step < steps && !fs.isPoweredOff; step++) {
    if (diskFailed() && !node.broker.running) break; // stopped by the disk error, or it failed its start
    const choice = random.nextInt(100);
    if (choice < 10) await run('create topic', () => createTopic(node, expected, random));
    else if (choice < 70) await run('produce', () => produce(node, expected, random));
    else if (choice < 85) await run('commit', () => commit(node, expected, random));
    else if (choice < 97) {
      node.clock.advance(random.nextInt(70_000));
      await settle(node.clock);
    } else {
      const stopped = node;
      await run('clean stop', async () => (await stopped.broker.stop(), true));
      if (diskFailed()) break;
      for (const batch of expected.batches) batch.durable = true;
      node = simBroker(fs, { config: CONFIG, seed: seed + step, startMs: stopped.clock.nowMs() + 1000 });
      await run('restart', async () => (await startNode(node), true));
    }
  }
  await settle(node.clock);
  return { expected, node };
}

/** Every batch of a partition's log as offset -> header, checking the batches are whole and contiguous. */
async function readPartition(broker: SpoolNode, topic: string, partition: number) {
  const hosted = broker.replicaManager.hostedPartitions().find((p) => p.topicPartition.topic === topic && p.topicPartition.partition === partition);
  assert.ok(hosted !== undefined, `${topic}-${partition} is hosted after the restart`);
  const log = hosted.log;
  const batches = new Map<number, ReturnType<typeof readBatchHeader>>();
  let offset = log.logStartOffset;
  while (offset < log.logEndOffset) {
    const { records } = await log.read(offset, { maxBytes: 1 << 20, minOneMessage: true });
    let progressed = false;
    for (const { header } of iterateBatches(records)) {
      assert.equal(header.baseOffset, offset, `${topic}-${partition}: batches are contiguous at ${offset}`);
      batches.set(header.baseOffset, header);
      offset = header.lastOffset + 1;
      progressed = true;
    }
    assert.ok(progressed, `${topic}-${partition}: a whole batch at offset ${offset}`);
  }
  return batches;
}

async function awaitOffsetsLoaded(node: SimNode): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const loading = GROUPS.some((groupId) => {
      const result = node.broker.groupCoordinator.fetchOffsets({ groupId, memberId: null, memberEpoch: -1, topics: null, requireStable: false });
      return result.errorCode === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS || result.errorCode === ErrorCode.COORDINATOR_NOT_AVAILABLE;
    });
    if (!loading) return;
    await settle(node.clock, 1);
  }
  assert.fail('the offsets of __consumer_offsets never loaded');
}

function fetchedOffset(node: SimNode, group: string, topic: string, partition: number): number {
  const result = node.broker.groupCoordinator.fetchOffsets({ groupId: group, memberId: null, memberEpoch: -1, topics: [{ name: topic, partitionIndexes: [partition] }], requireStable: false });
  assert.equal(result.errorCode, ErrorCode.NONE);
  return result.topics[0]?.partitions[0]?.committedOffset ?? -1;
}

async function verify(node: SimNode, expected: Expectations): Promise<void> {
  const image = node.broker.metadata.image;
  for (const [name, partitions] of expected.topics) {
    assert.equal(image.topicsByName.get(name)?.partitions.size, partitions, `acknowledged topic ${name} with ${partitions} partitions`);
  }
  const logs = new Map<string, Awaited<ReturnType<typeof readPartition>>>();
  for (const [name, partitions] of expected.topics) {
    for (let partition = 0; partition < partitions; partition++) logs.set(`${name}-${partition}`, await readPartition(node.broker, name, partition));
  }
  for (const acked of expected.batches) {
    const log = logs.get(`${acked.topic}-${acked.partition}`)!;
    const found = log.get(acked.offset);
    const where = `${acked.topic}-${acked.partition}@${acked.offset}`;
    if (acked.durable) assert.equal(found?.crc, acked.crc, `acknowledged batch at ${where}`);
    // Not fsynced: it may be gone, with everything after it, but never replaced.
    else if (found !== undefined) assert.equal(found.crc, acked.crc, `the batch at ${where} is the one acknowledged there`);
  }
  await awaitOffsetsLoaded(node);
  for (const [key, offset] of expected.commits) {
    const [group, topic, partition] = key.split('/') as [string, string, string];
    const fetched = fetchedOffset(node, group, topic, Number(partition));
    const inFlight = expected.commitInFlight?.key === key ? expected.commitInFlight.offset : offset;
    assert.ok(fetched === offset || fetched === inFlight, `committed offset of ${key}: ${fetched}, acknowledged ${offset}`);
  }
  await verifyIdempotentRetry(node, expected);
  for (const [name, partitions] of expected.topics) {
    for (let partition = 0; partition < partitions; partition++) {
      const result = await appendOne(node.broker, { topic: name, partition }, buildBatch({ records: [{ value: 'after restart' }] }));
      assert.equal(result.errorCode, ErrorCode.NONE, `a new append to ${name}-${partition}`);
    }
  }
}

/** The batch in flight at the cut, sent again, is acknowledged; no producer sequence is in a log twice. */
async function verifyIdempotentRetry(node: SimNode, expected: Expectations): Promise<void> {
  const retry = expected.produceInFlight;
  if (retry !== null && expected.topics.has(retry.topic)) {
    const result = await appendOne(node.broker, retry, Buffer.from(retry.records));
    // A lazy topic may have lost the producer's earlier batches: Kafka then refuses the sequence gap.
    const allowed: number[] = expected.lazyTopics.has(retry.topic) ? [ErrorCode.NONE, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER] : [ErrorCode.NONE];
    assert.ok(allowed.includes(result.errorCode), `the retry of the idempotent batch in flight to ${retry.topic}-${retry.partition}: error ${result.errorCode}`);
  }
  for (const [name, partitions] of expected.topics) {
    for (let partition = 0; partition < partitions; partition++) {
      const seen = new Set<string>();
      for (const header of (await readPartition(node.broker, name, partition)).values()) {
        if (header.producerId < 0) continue;
        const id = `${header.producerId}:${header.baseSequence}`;
        assert.ok(!seen.has(id), `${name}-${partition} holds producer ${id} twice`);
        seen.add(id);
      }
    }
  }
}

/**
 * One point: the workload of `seed` until call `atCall`, where the power
 * goes ('power cut') or that call fails with EIO ('disk error': the node
 * must stop by itself; the power goes at the end); then a restart on what
 * was durable.
 */
async function runPoint(seed: number, atCall: number, kind: 'power cut' | 'disk error'): Promise<void> {
  const fs = new SimFileSystem(new SeededRandom(seed ^ 0x5a5a5a5a));
  const keepUnsyncedPrefix = new SeededRandom(seed + atCall).nextInt(4) !== 0;
  if (kind === 'power cut') fs.schedulePowerCut({ afterCalls: atCall, keepUnsyncedPrefix });
  else fs.injectFault({ operation: 'any', code: 'EIO', skip: atCall });
  const { expected, node: last } = await workload(simBroker(fs, { config: CONFIG, seed }), fs, seed);
  if (kind === 'disk error') {
    await settle(last.clock);
    assert.equal(fs.faultsFired === 0 || !last.broker.running, true, 'after a disk error in its only log directory the node stops');
  }
  fs.clearFaults();
  if (!fs.isPoweredOff) fs.schedulePowerCut({ afterCalls: 0, keepUnsyncedPrefix });
  await last.broker.stop().catch(() => undefined);
  await settle(last.clock);
  fs.powerOn();
  const second = await restart(fs, { seed, startMs: last.clock.nowMs() + 1000, cutAgain: new SeededRandom(seed - atCall).nextInt(4) === 0 });
  try {
    await verify(second, expected);
  } finally {
    await second.broker.stop();
  }
}

/**
 * Starts a node on what survived; with `cutAgain` the power also goes
 * during that start (recovery is cut in turn) and the node after it must
 * start all the same.
 */
async function restart(fs: SimFileSystem, options: { seed: number; startMs: number; cutAgain: boolean }): Promise<SimNode> {
  const node = simBroker(fs, { config: CONFIG, seed: options.seed - 1, startMs: options.startMs });
  if (!options.cutAgain) {
    await startNode(node);
    return node;
  }
  fs.schedulePowerCut({ afterCalls: new SeededRandom(options.seed).nextInt(STARTUP_CALLS_MAX), keepUnsyncedPrefix: true });
  const started = await startNode(node).then(
    () => true,
    (error: unknown) => {
      if (!fs.isPoweredOff) throw error;
      return false;
    },
  );
  if (started && !fs.isPoweredOff) {
    fs.powerOn();
    return node;
  }
  await node.broker.stop().catch(() => undefined);
  await settle(node.clock);
  fs.powerOn();
  return restart(fs, { ...options, startMs: node.clock.nowMs() + 1000, cutAgain: false });
}

/** The calls a workload makes when nothing cuts it. */
async function callsOf(seed: number): Promise<number> {
  const fs = new SimFileSystem(new SeededRandom(seed ^ 0x5a5a5a5a));
  const { node } = await workload(simBroker(fs, { config: CONFIG, seed }), fs, seed);
  const calls = fs.totalCalls;
  await node.broker.stop();
  return calls;
}

/** Runs `points` points of `kind`, POINTS_PER_WORKLOAD per workload seed, spread over each workload's calls. */
async function runPoints(kind: 'power cut' | 'disk error', points: number, firstSeed: number): Promise<void> {
  for (let done = 0, seed = firstSeed; done < points; seed++) {
    const calls = await callsOf(seed);
    const picks = new SeededRandom(seed * 31 + 7);
    for (let point = 0; point < POINTS_PER_WORKLOAD && done < points; point++, done++) {
      const atCall = picks.nextInt(calls);
      try {
        await runPoint(seed, atCall, kind);
      } catch (error) {
        throw new Error(`${kind} failed: seed ${seed}, at call ${atCall} of ${calls}: ${error instanceof Error ? error.stack : String(error)}`);
      }
    }
  }
}

test(`a node restarts after ${POINTS} power cuts with everything acknowledged under flush.messages=1 (first seed ${FIRST_SEED})`, async () => {
  await runPoints('power cut', POINTS, FIRST_SEED);
});

test(`a disk error at any of ${FAULT_POINTS} calls stops the node without acknowledging what failed (first seed ${FIRST_SEED + POINTS})`, async () => {
  await runPoints('disk error', FAULT_POINTS, FIRST_SEED + POINTS);
});
