/**
 * The share groups' `simple` assignor. Proves: fewer members than
 * partitions spreads each partition to exactly one member, counts differing
 * by at most one; more members than partitions shares each partition among
 * ceil(members / partitions) members and gives every member work; only the
 * assignable (initialized) partitions are handed out; members keep their
 * previous partitions when a member joins (sticky); members subscribed to
 * different topics only get their own topics.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Assignment } from '../../src/group/consumer-group.js';
import { simpleAssign, type ShareAssignmentMemberSpec } from '../../src/group/share-assignor.js';

const T = 'topic-a';
const U = 'topic-b';

function spec(members: Record<string, { topics: string[]; previous?: Record<string, number[]> }>): Map<string, ShareAssignmentMemberSpec> {
  return new Map(
    Object.entries(members).map(([id, m]) => [
      id,
      { subscribedTopicIds: new Set(m.topics), assignment: new Map(Object.entries(m.previous ?? {}).map(([topic, ps]) => [topic, new Set(ps)])) as Assignment },
    ]),
  );
}

function partitions(assignment: Assignment | undefined, topicId: string): number[] {
  return [...(assignment?.get(topicId) ?? [])].sort((a, b) => a - b);
}

test('fewer members than partitions: every partition once, counts within one', () => {
  const result = simpleAssign({ members: spec({ a: { topics: [T] }, b: { topics: [T] }, c: { topics: [T] } }), assignablePartitions: new Map([[T, new Set([0, 1, 2, 3, 4, 5, 6])]]) });
  const all = [...result.values()].flatMap((a) => partitions(a, T)).sort((x, y) => x - y);
  assert.deepEqual(all, [0, 1, 2, 3, 4, 5, 6]);
  const counts = [...result.values()].map((a) => partitions(a, T).length).sort();
  assert.deepEqual(counts, [2, 2, 3]);
});

test('more members than partitions: each partition shared by ceil(members / partitions), every member has work', () => {
  const members = Object.fromEntries(['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((id) => [id, { topics: [T] }]));
  const result = simpleAssign({ members: spec(members), assignablePartitions: new Map([[T, new Set([0, 1, 2])]]) });
  const holders = new Map<number, number>();
  for (const assignment of result.values()) {
    const held = partitions(assignment, T);
    assert.ok(held.length >= 1);
    for (const p of held) holders.set(p, (holders.get(p) ?? 0) + 1);
  }
  assert.deepEqual([...holders].sort(), [[0, 3], [1, 3], [2, 3]], 'ceil(7 / 3) = 3 members per partition');
});

test('only assignable partitions are handed out', () => {
  const result = simpleAssign({ members: spec({ a: { topics: [T, U] } }), assignablePartitions: new Map([[T, new Set([1])]]) });
  assert.deepEqual(partitions(result.get('a'), T), [1]);
  assert.deepEqual(partitions(result.get('a'), U), []);
});

test('a joining member takes partitions without moving the others more than needed', () => {
  const assignable = new Map([[T, new Set([0, 1, 2, 3])]]);
  const result = simpleAssign({ members: spec({ a: { topics: [T], previous: { [T]: [0, 1] } }, b: { topics: [T], previous: { [T]: [2, 3] } }, c: { topics: [T] } }), assignablePartitions: assignable });
  const kept = partitions(result.get('a'), T).filter((p) => [0, 1].includes(p)).length + partitions(result.get('b'), T).filter((p) => [2, 3].includes(p)).length;
  assert.equal(kept, 3, 'only one partition moves to the newcomer');
  assert.equal(partitions(result.get('c'), T).length, 1);
});

test('members get only the topics they subscribe to', () => {
  const result = simpleAssign({
    members: spec({ a: { topics: [T] }, b: { topics: [U] }, c: { topics: [T, U] } }),
    assignablePartitions: new Map([[T, new Set([0, 1])], [U, new Set([0, 1])]]),
  });
  assert.deepEqual(partitions(result.get('a'), U), []);
  assert.deepEqual(partitions(result.get('b'), T), []);
  for (const topic of [T, U]) {
    const all = [...result.values()].flatMap((a) => partitions(a, topic)).sort();
    assert.deepEqual(all, [0, 1], `${topic}: each partition once`);
  }
});
