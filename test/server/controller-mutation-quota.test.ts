/**
 * Proves the controller mutation quota follows Kafka's
 * ControllerMutationQuotaManager (KIP-599) on a manual clock:
 * - TokenBucket: a new bucket holds the burst (quota × quota.window.num ×
 *   quota.window.size.seconds), refills at the quota a second, never above
 *   the burst, and may go below zero;
 * - strict (the version at or past strictSinceVersion): a mutation is
 *   accepted while the bucket is not below zero (it may take it below),
 *   refused once it is, and a refused mutation takes nothing; the throttle
 *   time is -tokens / quota seconds, less the time passed since;
 * - permissive (older versions): every mutation is accepted and only the
 *   throttle time says the quota was exceeded;
 * - no controller_mutation_rate set, or none for this client: unbounded.
 * - entities resolve as the byte quotas: a user's quota counts per user.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ControllerMutationQuotaManager, TokenBucket } from '../../src/server/controller-mutation-quota.js';
import { applyClientQuota, type ClientQuotaImage } from '../../src/metadata/client-quotas.js';

const WINDOWS = { windowCount: 11, windowSizeMs: 1000 };

function quotasOf(entries: { entity: { entityType: string; entityName: string | null }[]; value: number }[]): Map<string, ClientQuotaImage> {
  const quotas = new Map<string, ClientQuotaImage>();
  for (const { entity, value } of entries) applyClientQuota(quotas, { entity, key: 'controller_mutation_rate', value, remove: false });
  return quotas;
}

function manager(entries: Parameters<typeof quotasOf>[0], clock: { nowMs: number }) {
  const quotas = new ControllerMutationQuotaManager(WINDOWS, () => clock.nowMs);
  quotas.update(quotasOf(entries));
  return quotas;
}

const client = (clientId: string, apiVersion: number, principal = 'User:ANONYMOUS') => ({ principal, clientId, apiVersion });

test('TokenBucket: full at first, refills at the quota a second up to the burst, may go negative', () => {
  const bucket = new TokenBucket(22, 1000);
  assert.equal(bucket.measure(2, 22, 1000), 22);
  bucket.record(30, 2, 22, 1000);
  assert.equal(bucket.measure(2, 22, 1000), -8);
  assert.equal(bucket.measure(2, 22, 3000), -4, 'two seconds at 2 a second');
  assert.equal(bucket.measure(2, 22, 60_000), 22, 'never above the burst');
});

test('strict: accepted while the bucket is not below zero, then refused with the time to refill; a refused mutation takes nothing', () => {
  const clock = { nowMs: 5000 };
  const quotas = manager([{ entity: [{ entityType: 'client-id', entityName: 'c1' }], value: 1 }], clock);
  assert.equal(quotas.quotasEnabled, true);
  const request = quotas.newQuotaFor(client('c1', 7), { strictSinceVersion: 6 });
  // burst = 1 × 11 × 1 s = 11 tokens.
  assert.equal(request.record(10), true);
  assert.equal(request.record(10), true, 'one token left: accepted, the bucket goes to -9');
  assert.equal(request.throttleTimeMs(), 0, 'no violation seen yet');
  assert.equal(request.record(1), false, 'below zero: refused');
  assert.equal(request.throttleTimeMs(), 9000);
  clock.nowMs += 4000;
  assert.equal(request.throttleTimeMs(), 5000, 'the throttle time counts down from the violation');
  const later = quotas.newQuotaFor(client('c1', 7), { strictSinceVersion: 6 });
  assert.equal(later.record(1), false, '-5 tokens: still refused (the refused mutation took nothing)');
  assert.equal(later.throttleTimeMs(), 5000);
  clock.nowMs += 5000;
  const refilled = quotas.newQuotaFor(client('c1', 7), { strictSinceVersion: 6 });
  assert.equal(refilled.record(3), true, 'back at 0 tokens: accepted again');
  assert.equal(refilled.throttleTimeMs(), 0);
});

test('permissive: every mutation accepted, the throttle time set once the bucket is below zero', () => {
  const clock = { nowMs: 0 };
  const quotas = manager([{ entity: [{ entityType: 'client-id', entityName: null }], value: 2 }], clock);
  const request = quotas.newQuotaFor(client('any', 5), { strictSinceVersion: 6 });
  // burst = 2 × 11 = 22 tokens.
  assert.equal(request.record(20), true);
  assert.equal(request.throttleTimeMs(), 0);
  assert.equal(request.record(10), true, 'taken below zero, accepted all the same');
  assert.equal(request.throttleTimeMs(), 4000, '-8 tokens at 2 a second');
  assert.equal(request.record(10), true);
  assert.equal(request.throttleTimeMs(), 9000);
});

test('unbounded without a controller_mutation_rate, or for a client no entity covers; users counted per user', () => {
  const clock = { nowMs: 0 };
  const none = manager([], clock);
  assert.equal(none.quotasEnabled, false);
  const free = none.newQuotaFor(client('c1', 7), { strictSinceVersion: 6 });
  for (let i = 0; i < 10; i++) assert.equal(free.record(1000), true);
  assert.equal(free.throttleTimeMs(), 0);

  const named = manager([{ entity: [{ entityType: 'client-id', entityName: 'c1' }], value: 1 }], clock);
  const other = named.newQuotaFor(client('c2', 7), { strictSinceVersion: 6 });
  assert.equal(other.record(1000), true);
  assert.equal(other.record(1000), true, 'c2 has no quota');

  const users = manager([{ entity: [{ entityType: 'user', entityName: null }], value: 1 }], clock);
  assert.equal(users.newQuotaFor(client('x', 7, 'User:alice'), { strictSinceVersion: 6 }).record(12), true);
  assert.equal(users.newQuotaFor(client('y', 7, 'User:alice'), { strictSinceVersion: 6 }).record(1), false, "alice's bucket, whatever her client id");
  assert.equal(users.newQuotaFor(client('x', 7, 'User:bob'), { strictSinceVersion: 6 }).record(11), true, 'bob has a bucket of his own');
});
