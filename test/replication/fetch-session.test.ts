/**
 * Proves the fetch session cache follows KIP-227 as Kafka implements it: a
 * full fetch creates a session (epoch 1 next), an incremental fetch with the
 * right epoch answers only changed partitions and moves partitions that
 * returned data to the back, wrong ids and epochs get Kafka's errors, epoch
 * -1 closes a session, switching between names and topic ids is refused, and
 * the cache stays within its slots, evicting stale or less valuable sessions.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SeededRandom } from '../../src/io/random.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import {
  FetchManager,
  FetchSessionCache,
  FINAL_EPOCH,
  INVALID_SESSION_ID,
  nextEpoch,
  partitionKey,
  type PartitionFetchRequest,
  type PartitionFetchResult,
  type TopicIdPartition,
} from '../../src/replication/fetch-session.js';

const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';

function setup(sessionsMax = 10) {
  let nowMs = 0;
  const cache = new FetchSessionCache({ sessionsMax, evictionMs: 120_000, random: new SeededRandom(1) });
  const manager = new FetchManager(cache, () => nowMs);
  return { cache, manager, advance: (ms: number) => (nowMs += ms) };
}

function part(topic: string, partition: number): TopicIdPartition {
  return { topicId: ZERO_UUID, topic, partition };
}

function fetchData(entries: [TopicIdPartition, number][]) {
  const request = (fetchOffset: number): PartitionFetchRequest => ({ fetchOffset, logStartOffset: -1, maxBytes: 1024, currentLeaderEpoch: -1, lastFetchedEpoch: -1 });
  return new Map(entries.map(([p, offset]) => [partitionKey(p, false), { part: p, request: request(offset) }]));
}

function result(overrides: Partial<PartitionFetchResult> = {}): PartitionFetchResult {
  return { errorCode: 0, highWatermark: 10, logStartOffset: 0, recordsBytes: 0, preferredReadReplica: -1, divergingEpoch: false, ...overrides };
}

const names = () => null;

test('full fetch creates a session; incremental fetches answer only what changed', () => {
  const { manager, cache } = setup();
  const a = part('t', 0);
  const b = part('t', 1);
  const full = manager.newContext({ version: 12, sessionId: 0, epoch: 0, isFollower: false, fetchData: fetchData([[a, 0], [b, 0]]), toForget: [], topicNames: names });
  assert.equal(full.kind, 'full');
  const fullResponse = full.respond(full.partitions().map((p) => ({ ...p, result: result(), data: null })));
  assert.notEqual(fullResponse.sessionId, INVALID_SESSION_ID);
  assert.equal(fullResponse.partitions.length, 2);
  assert.equal(cache.size, 1);

  const sessionId = fullResponse.sessionId;
  const incremental = manager.newContext({ version: 12, sessionId, epoch: 1, isFollower: false, fetchData: new Map(), toForget: [], topicNames: names });
  assert.equal(incremental.kind, 'incremental');
  const parts = incremental.partitions();
  assert.deepEqual(parts.map((p) => p.part.partition), [0, 1], 'cached partitions are fetched though the request listed none');
  const answered = incremental.respond([
    { ...parts[0]!, result: result({ recordsBytes: 100, highWatermark: 11 }), data: null },
    { ...parts[1]!, result: result(), data: null },
  ]);
  assert.equal(answered.errorCode, ErrorCode.NONE);
  assert.deepEqual(answered.partitions.map((p) => p.part.partition), [0], 'the unchanged partition is left out');

  const next = manager.newContext({ version: 12, sessionId, epoch: 2, isFollower: false, fetchData: new Map(), toForget: [], topicNames: names });
  assert.deepEqual(next.partitions().map((p) => p.part.partition), [1, 0], 'the partition that returned data moved to the back');
});

test('unknown session id, wrong epoch and a names/ids switch get Kafka errors with no partitions', () => {
  const { manager } = setup();
  const unknown = manager.newContext({ version: 12, sessionId: 12345, epoch: 1, isFollower: false, fetchData: new Map(), toForget: [], topicNames: names });
  assert.deepEqual(unknown.respond([]), { errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND, sessionId: 0, partitions: [] });

  const full = manager.newContext({ version: 12, sessionId: 0, epoch: 0, isFollower: false, fetchData: fetchData([[part('t', 0), 0]]), toForget: [], topicNames: names });
  const { sessionId } = full.respond(full.partitions().map((p) => ({ ...p, result: result(), data: null })));
  const wrongEpoch = manager.newContext({ version: 12, sessionId, epoch: 5, isFollower: false, fetchData: new Map(), toForget: [], topicNames: names });
  assert.equal(wrongEpoch.respond([]).errorCode, ErrorCode.INVALID_FETCH_SESSION_EPOCH);
  const switched = manager.newContext({ version: 13, sessionId, epoch: 1, isFollower: false, fetchData: new Map(), toForget: [], topicNames: names });
  assert.equal(switched.respond([]).errorCode, ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR);
});

test('epoch -1 closes the session and serves a sessionless fetch; forgetting every partition ends it too', () => {
  const { manager, cache } = setup();
  const full = manager.newContext({ version: 12, sessionId: 0, epoch: 0, isFollower: false, fetchData: fetchData([[part('t', 0), 0]]), toForget: [], topicNames: names });
  const { sessionId } = full.respond(full.partitions().map((p) => ({ ...p, result: result(), data: null })));
  const closing = manager.newContext({ version: 12, sessionId, epoch: FINAL_EPOCH, isFollower: false, fetchData: fetchData([[part('t', 0), 3]]), toForget: [], topicNames: names });
  assert.equal(closing.kind, 'sessionless');
  assert.equal(cache.size, 0);

  const again = manager.newContext({ version: 12, sessionId: 0, epoch: 0, isFollower: false, fetchData: fetchData([[part('t', 0), 0]]), toForget: [], topicNames: names });
  const second = again.respond(again.partitions().map((p) => ({ ...p, result: result(), data: null }))).sessionId;
  const forget = manager.newContext({ version: 12, sessionId: second, epoch: 1, isFollower: false, fetchData: new Map(), toForget: [partitionKey(part('t', 0), false)], topicNames: names });
  assert.equal(forget.kind, 'sessionless');
  assert.equal(cache.size, 0);
});

test('a full cache refuses new consumer sessions until one is stale, then evicts it', () => {
  const { manager, cache, advance } = setup(1);
  const open = () => {
    const ctx = manager.newContext({ version: 12, sessionId: 0, epoch: 0, isFollower: false, fetchData: fetchData([[part('t', 0), 0]]), toForget: [], topicNames: names });
    return ctx.respond(ctx.partitions().map((p) => ({ ...p, result: result(), data: null }))).sessionId;
  };
  const first = open();
  assert.notEqual(first, INVALID_SESSION_ID);
  assert.equal(open(), INVALID_SESSION_ID, 'a same-size session created just now is not evictable');
  assert.equal(cache.size, 1);
  advance(120_001);
  const third = open();
  assert.notEqual(third, INVALID_SESSION_ID);
  assert.equal(cache.size, 1);
  assert.equal(cache.get(first), undefined);
  assert.equal(cache.evictions, 1);
});

test('session epochs wrap from Integer.MAX_VALUE to 1 and stay -1 once final', () => {
  assert.equal(nextEpoch(0), 1);
  assert.equal(nextEpoch(0x7fffffff), 1);
  assert.equal(nextEpoch(FINAL_EPOCH), FINAL_EPOCH);
});
