/**
 * `__consumer_offsets` is compacted (cleanup.policy=compact, as Kafka
 * creates it), so the group coordinator's load after a restart replays the
 * live keys, not the history: a whole node on the simulated disk takes
 * 3000 commits to one group's partition, its cleaner runs, and the
 * restarted coordinator loads a small fraction of them and still fetches
 * the last committed offset. What it replays is the active segment (never
 * cleaned, as in Kafka) and one record per live key.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SeededRandom } from '../../../src/io/env.js';
import { SimFileSystem } from '../../../src/io/sim-fs.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { CONSUMER_OFFSETS_TOPIC } from '../../../src/group/placement.js';
import type { Logger } from '../../../src/common/logger.js';
import { SIM_LOG_DIR, settle, simBroker, type SimNode } from '../../server/sim-broker.js';

const COMMITS = 3000;
/** Large commit metadata (below offset.metadata.max.bytes) fills the smallest allowed segment.bytes (1 MiB) quickly. */
const METADATA = 'm'.repeat(3000);
const CONFIG = { 'offsets.topic.num.partitions': 1, 'offsets.topic.segment.bytes': 1048576, 'log.cleaner.backoff.ms': 1000 };

function recordingLogger(lines: string[]): Logger {
  return { error: (line) => lines.push(line), warn() {}, info: (line) => lines.push(line), debug() {} };
}

async function commit(node: SimNode, offset: number): Promise<number | undefined> {
  for (;;) {
    const response = await node.broker.groupCoordinator.commitOffsets(
      {
        groupId: 'group',
        generationIdOrMemberEpoch: -1,
        memberId: '',
        groupInstanceId: null,
        retentionTimeMs: -1,
        topics: [{ name: 'topic', partitions: [{ partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: -1, committedMetadata: METADATA }] }],
      },
      8,
    );
    const errorCode = response[0]?.partitions[0]?.errorCode;
    if (errorCode !== ErrorCode.COORDINATOR_LOAD_IN_PROGRESS) return errorCode;
    await settle(node.clock, 1);
  }
}

async function fetchCommitted(node: SimNode): Promise<number> {
  for (;;) {
    const result = node.broker.groupCoordinator.fetchOffsets({ groupId: 'group', memberId: null, memberEpoch: -1, topics: [{ name: 'topic', partitionIndexes: [0] }], requireStable: false });
    if (result.errorCode !== ErrorCode.COORDINATOR_LOAD_IN_PROGRESS) return result.topics[0]!.partitions[0]!.committedOffset;
    await settle(node.clock, 1);
  }
}

async function cleanerCheckpoint(fs: SimFileSystem): Promise<number> {
  const path = `${SIM_LOG_DIR}/cleaner-offset-checkpoint`;
  if ((await fs.stat(path)) === null) return 0;
  const line = (await fs.readFile(path)).toString().split('\n').find((entry) => entry.startsWith(`${CONSUMER_OFFSETS_TOPIC} 0 `));
  return line === undefined ? 0 : Number(line.split(' ')[2]);
}

test('a restarted group coordinator loads the live offsets of a cleaned __consumer_offsets, not every commit', async () => {
  const fs = new SimFileSystem(new SeededRandom(7));
  const first = simBroker(fs, { config: CONFIG });
  await first.broker.start();
  assert.equal((await first.broker.brokerServer!.autoCreateTopics([CONSUMER_OFFSETS_TOPIC]))[0]?.errorCode, ErrorCode.NONE);
  const [created] = await first.broker.controller.createTopics([{ name: 'topic', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], { validateOnly: false });
  assert.equal(created?.errorCode, ErrorCode.NONE);
  for (let offset = 1; offset <= COMMITS; offset++) assert.equal(await commit(first, offset), ErrorCode.NONE);
  for (let round = 0; round < 100 && (await cleanerCheckpoint(fs)) < COMMITS / 2; round++) {
    first.clock.advance(1000);
    await settle(first.clock, 20);
  }
  assert.ok((await cleanerCheckpoint(fs)) >= COMMITS / 2, 'the cleaner went over __consumer_offsets');
  await first.broker.stop();

  const lines: string[] = [];
  const second = simBroker(fs, { config: CONFIG, logger: recordingLogger(lines), startMs: first.clock.nowMs() + 1000 });
  await second.broker.start();
  assert.equal(await fetchCommitted(second), COMMITS);
  const loaded = lines.map((line) => /loaded group coordinator __consumer_offsets-0 \(epoch \d+, (\d+) records/.exec(line)).find((match) => match !== null);
  assert.ok(loaded !== undefined, `no load line in:\n${lines.join('\n')}`);
  assert.ok(Number(loaded[1]) < COMMITS / 5, `the coordinator replayed ${loaded[1]} records of ${COMMITS} commits`);
  await second.broker.stop();
});
