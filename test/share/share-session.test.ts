/**
 * Share sessions as Kafka's SharePartitionManager.newContext and
 * acknowledgeSessionUpdate treat them: epoch 0 opens (replacing the
 * member's earlier session, refusing acknowledgements, bounded by
 * group.share.max.share.sessions), -1 ends, any other epoch must be the
 * current one and moves it on (wrapping after the largest int32 to 1); a
 * continued session adds and forgets partitions; a closed connection takes
 * its sessions with it, but not a session the member reopened elsewhere.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ShareSessionCache, nextShareSessionEpoch, type ContextOutcome } from '../../src/share/share-session.js';

const T = 'AAAAAAAAAAAAAAAAAAAAAQ';
const open = (cache: ShareSessionCache, memberId: string, options: { connectionId?: string; partitions?: number[]; hasAcknowledgements?: boolean } = {}): ContextOutcome =>
  cache.newContext({
    groupId: 'g',
    memberId,
    epoch: 0,
    partitions: (options.partitions ?? [0]).map((partition) => ({ topicId: T, partition })),
    forgotten: [],
    hasAcknowledgements: options.hasAcknowledgements ?? false,
    connectionId: options.connectionId ?? 'c1',
  });

test('epoch 0 opens a session at epoch 1; the next request must carry that epoch, and each moves it on', () => {
  const cache = new ShareSessionCache(10);
  const opened = open(cache, 'm1');
  assert.ok(opened.ok && opened.context.kind === 'new');
  assert.equal(cache.get('g', 'm1')?.epoch, 1);
  const stale = cache.newContext({ groupId: 'g', memberId: 'm1', epoch: 5, partitions: [], forgotten: [], hasAcknowledgements: false, connectionId: 'c1' });
  assert.deepEqual(stale, { ok: false, errorCode: ErrorCode.INVALID_SHARE_SESSION_EPOCH });
  const next = cache.newContext({ groupId: 'g', memberId: 'm1', epoch: 1, partitions: [{ topicId: T, partition: 1 }], forgotten: [{ topicId: T, partition: 0 }], hasAcknowledgements: true, connectionId: 'c1' });
  assert.ok(next.ok && next.context.kind === 'subsequent');
  assert.deepEqual([...next.context.session.partitions.keys()], [`${T}:1`]);
  assert.ok(next.context.session.unreported.has(`${T}:1`));
  assert.equal(cache.get('g', 'm1')?.epoch, 2);
  assert.equal(cache.acknowledgeSessionUpdate('g', 'm1', 2), ErrorCode.NONE);
  assert.equal(cache.get('g', 'm1')?.epoch, 3);
  assert.equal(cache.acknowledgeSessionUpdate('g', 'm1', 2), ErrorCode.INVALID_SHARE_SESSION_EPOCH);
});

test('an opening request with acknowledgements is INVALID_REQUEST; acknowledging at epoch 0 is INVALID_SHARE_SESSION_EPOCH', () => {
  const cache = new ShareSessionCache(10);
  assert.deepEqual(open(cache, 'm1', { hasAcknowledgements: true }), { ok: false, errorCode: ErrorCode.INVALID_REQUEST });
  assert.equal(cache.size, 0);
  open(cache, 'm1');
  assert.equal(cache.acknowledgeSessionUpdate('g', 'm1', 0), ErrorCode.INVALID_SHARE_SESSION_EPOCH);
});

test('without a session: a continued or final request is SHARE_SESSION_NOT_FOUND', () => {
  const cache = new ShareSessionCache(10);
  for (const epoch of [1, -1]) {
    const outcome = cache.newContext({ groupId: 'g', memberId: 'm1', epoch, partitions: [], forgotten: [], hasAcknowledgements: false, connectionId: 'c1' });
    assert.deepEqual(outcome, { ok: false, errorCode: ErrorCode.SHARE_SESSION_NOT_FOUND });
    assert.equal(cache.acknowledgeSessionUpdate('g', 'm1', epoch), ErrorCode.SHARE_SESSION_NOT_FOUND);
  }
  open(cache, 'm1');
  const final = cache.newContext({ groupId: 'g', memberId: 'm1', epoch: -1, partitions: [], forgotten: [], hasAcknowledgements: true, connectionId: 'c1' });
  assert.deepEqual(final, { ok: true, context: { kind: 'final' } });
});

test('the cache holds at most its limit: a new member is refused, a member reopening its own session is not', () => {
  const cache = new ShareSessionCache(2);
  assert.ok(open(cache, 'm1').ok);
  assert.ok(open(cache, 'm2').ok);
  assert.deepEqual(open(cache, 'm3'), { ok: false, errorCode: ErrorCode.SHARE_SESSION_LIMIT_REACHED });
  const reopened = open(cache, 'm1', { partitions: [3] });
  assert.ok(reopened.ok);
  assert.deepEqual([...cache.get('g', 'm1')!.partitions.keys()], [`${T}:3`]);
  assert.equal(cache.size, 2);
});

test('a closed connection ends its sessions, except one its member reopened on another connection', () => {
  const cache = new ShareSessionCache(10);
  open(cache, 'm1', { connectionId: 'c1' });
  open(cache, 'm2', { connectionId: 'c1' });
  open(cache, 'm2', { connectionId: 'c2' });
  const closed = cache.connectionClosed('c1');
  assert.deepEqual(closed.map((session) => session.memberId), ['m1']);
  assert.equal(cache.get('g', 'm1'), undefined);
  assert.equal(cache.get('g', 'm2')?.connectionId, 'c2');
  assert.deepEqual(cache.connectionClosed('c1'), []);
});

test('the epoch after the largest int32 is 1', () => {
  assert.equal(nextShareSessionEpoch(0x7fffffff), 1);
  assert.equal(nextShareSessionEpoch(1), 2);
});
