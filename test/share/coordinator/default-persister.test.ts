/**
 * The DefaultSharePersister's routing and retries, with a fake channel and
 * a manual clock: a share partition whose state partition this node leads
 * is answered by the local share coordinator without a request; one led by
 * another broker is sent there; NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
 * COORDINATOR_NOT_AVAILABLE, an unreachable broker and a state topic with
 * no leader are retried with Kafka's doubling backoff, PERSISTER_ATTEMPTS_MAX
 * attempts at most; any other error is answered at once; a missing state
 * topic is created first.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DefaultSharePersister, PERSISTER_ATTEMPTS_MAX, REQUEST_BACKOFF_MS } from '../../../src/share/default-persister.js';
import { SHARE_GROUP_STATE_TOPIC } from '../../../src/share/coordinator/coordinator.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import type { MetadataImage, TopicImage } from '../../../src/metadata/image.js';
import { SeededRandom, realEnv, type Env } from '../../../src/io/env.js';
import { imageWith } from '../../group/helpers.js';
import { shareHarness, TOPIC, TOPIC_ID, type ShareHarness } from './helpers.js';

const KEY = { groupId: 'g', topicId: TOPIC_ID, partition: 0 };

/** The harness's topic plus `__share_group_state`, every partition led by `leader`. */
function imageLedBy(h: ShareHarness, leader: number): MetadataImage {
  const image = imageWith([{ name: TOPIC, partitions: 4 }, { name: SHARE_GROUP_STATE_TOPIC, partitions: h.config.stateTopicPartitions }]);
  const state = image.topicsByName.get(SHARE_GROUP_STATE_TOPIC)!;
  const partitions = new Map([...state.partitions].map(([p, registration]) => [p, { ...registration, leader }]));
  const topic: TopicImage = { ...state, partitions };
  return { ...image, topicsByName: new Map([...image.topicsByName, [SHARE_GROUP_STATE_TOPIC, topic]]) };
}

interface Sent {
  brokerId: number;
  apiKey: number;
}

function persisterOver(h: ShareHarness, image: () => MetadataImage, answer: (sent: Sent) => unknown, options: { createStateTopic?: () => Promise<boolean> } = {}) {
  const sent: Sent[] = [];
  const backoffsMs: number[] = [];
  const timers = {
    schedule: (delayMs: number, callback: () => void) => {
      backoffsMs.push(delayMs);
      return h.clock.schedule(delayMs, callback);
    },
    defer: (callback: () => void) => h.clock.defer(callback),
  };
  const env: Env = { ...realEnv, clock: h.clock, timers, random: new SeededRandom(1) };
  const persister = new DefaultSharePersister({
    nodeId: 1,
    env,
    image,
    coordinator: h.coordinator,
    channel: {
      send: async (brokerId, api) => {
        const request = { brokerId, apiKey: api.key };
        sent.push(request);
        return answer(request) as never;
      },
    },
    createStateTopic: options.createStateTopic ?? (async () => false),
  });
  return { persister, sent, backoffsMs };
}

/** Runs `call` to its end, advancing the manual clock through each backoff. */
async function withBackoffs<T>(h: ShareHarness, call: Promise<T>): Promise<T> {
  let done = false;
  const result = call.finally(() => (done = true));
  while (!done) {
    await new Promise((resolve) => setImmediate(resolve));
    if (!done) h.clock.advance(REQUEST_BACKOFF_MS * 16);
  }
  return result;
}

const writeAnswer = (errorCode: number) => ({ results: [{ topicId: TOPIC_ID, partitions: [{ partition: 0, errorCode, errorMessage: null }] }] });

test('a share partition this node coordinates is answered locally, without a request', async () => {
  const h = await shareHarness();
  const { persister, sent } = persisterOver(h, () => imageLedBy(h, 1), () => assert.fail('no request expected'));
  assert.equal((await persister.initializeState(KEY, { stateEpoch: 0, startOffset: 5 })).errorCode, ErrorCode.NONE);
  assert.equal((await persister.readState(KEY, { leaderEpoch: 1 })).startOffset, 5);
  assert.equal(sent.length, 0);
});

test('one led elsewhere is sent to its leader; a non-retriable error is answered at once', async () => {
  const h = await shareHarness();
  const { persister, sent } = persisterOver(h, () => imageLedBy(h, 2), () => writeAnswer(ErrorCode.FENCED_LEADER_EPOCH));
  const result = await persister.writeState(KEY, { stateEpoch: 0, leaderEpoch: 0, startOffset: 0, deliveryCompleteCount: -1, stateBatches: [] });
  assert.equal(result.errorCode, ErrorCode.FENCED_LEADER_EPOCH);
  assert.deepEqual(sent, [{ brokerId: 2, apiKey: 85 }]);
});

test('coordinator errors and an unreachable broker are retried, with doubling backoff, until one answer is final', async () => {
  const h = await shareHarness();
  const answers = [ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, -1, ErrorCode.NOT_COORDINATOR, ErrorCode.NONE];
  const { persister, sent, backoffsMs } = persisterOver(h, () => imageLedBy(h, 2), () => {
    const errorCode = answers.shift()!;
    if (errorCode === -1) throw new Error('connection refused');
    return writeAnswer(errorCode);
  });
  const result = await withBackoffs(h, persister.deleteState(KEY));
  assert.equal(result.errorCode, ErrorCode.NONE);
  assert.equal(sent.length, 4);
  assert.equal(backoffsMs.length, 3);
  backoffsMs.forEach((delayMs, i) => {
    const baseMs = REQUEST_BACKOFF_MS * 2 ** i;
    assert.ok(delayMs >= baseMs * 0.8 && delayMs <= baseMs * 1.2, `backoff ${i} is ${baseMs} ms with 20% jitter, got ${delayMs}`);
  });
});

test('after PERSISTER_ATTEMPTS_MAX attempts the last coordinator error is the answer', async () => {
  const h = await shareHarness();
  const { persister, sent } = persisterOver(h, () => imageLedBy(h, 2), () => writeAnswer(ErrorCode.NOT_COORDINATOR));
  assert.equal((await withBackoffs(h, persister.deleteState(KEY))).errorCode, ErrorCode.NOT_COORDINATOR);
  assert.equal(sent.length, PERSISTER_ATTEMPTS_MAX);
});

test('a missing state topic is created first; one that cannot be created is COORDINATOR_NOT_AVAILABLE after the retries', async () => {
  const h = await shareHarness();
  let image = imageWith([{ name: TOPIC, partitions: 4 }]);
  let creations = 0;
  const { persister } = persisterOver(h, () => image, () => assert.fail('no request expected'), {
    createStateTopic: async () => {
      creations++;
      image = imageLedBy(h, 1);
      return true;
    },
  });
  assert.equal((await persister.initializeState(KEY, { stateEpoch: 0, startOffset: 0 })).errorCode, ErrorCode.NONE);
  assert.equal(creations, 1);

  const failing = persisterOver(h, () => imageWith([{ name: TOPIC, partitions: 4 }]), () => assert.fail('no request expected'));
  const result = await withBackoffs(h, failing.persister.readSummary(KEY, { leaderEpoch: 0 }));
  assert.deepEqual([result.errorCode, result.startOffset], [ErrorCode.COORDINATOR_NOT_AVAILABLE, -1]);
});
