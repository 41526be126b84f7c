/**
 * Proves the client quota manager follows Kafka's ClientQuotaManager with
 * its default callback: no quota set means quotas are off and nothing is
 * throttled; the bound is the most specific entity in Kafka's order
 * (user+client-id, user+default client-id, user, default user+client-id,
 * default user+default client-id, default user, client-id, default
 * client-id); Kafka's Rate over quota.window.num windows and its throttle
 * time formula; unrecord takes bytes back; maxValueInQuotaWindow; a rate
 * below the bound once old samples expire.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ClientQuotaManager, Rate } from '../../src/server/client-quota-manager.js';
import { applyClientQuota, type ClientQuotaImage } from '../../src/metadata/client-quotas.js';

const WINDOWS = { windowCount: 11, windowSizeMs: 1000 };

type Side = string | null | undefined;

function quotasOf(entries: [Side, Side, number][]): Map<string, ClientQuotaImage> {
  const quotas = new Map<string, ClientQuotaImage>();
  for (const [user, clientId, value] of entries) {
    const entity = [
      ...(user === undefined ? [] : [{ entityType: 'user', entityName: user }]),
      ...(clientId === undefined ? [] : [{ entityType: 'client-id', entityName: clientId }]),
    ];
    applyClientQuota(quotas, { entity, key: 'producer_byte_rate', value, remove: false });
  }
  return quotas;
}

function manager(entries: [Side, Side, number][], clock = { nowMs: 0 }) {
  const quota = new ClientQuotaManager('producer_byte_rate', WINDOWS, () => clock.nowMs);
  quota.update(quotasOf(entries));
  return quota;
}

test('no quota: disabled, never throttled, no window cap', () => {
  const quota = manager([]);
  assert.equal(quota.quotasEnabled, false);
  assert.equal(quota.recordAndGetThrottleTimeMs('alice', 'c1', 1e12), 0);
  assert.equal(quota.maxValueInQuotaWindow('alice', 'c1'), Number.MAX_VALUE);
});

test('Kafka\'s throttle time: (rate - bound) / bound x window, the window at least quota.window.num - 1 windows', () => {
  const clock = { nowMs: 5000 };
  const quota = manager([[undefined, 'c1', 1000]], clock);
  assert.equal(quota.recordAndGetThrottleTimeMs('u', 'c1', 5000), 0, '5000 B over 10 s is 500 B/s');
  assert.equal(quota.recordAndGetThrottleTimeMs('u', 'c1', 10_000), 5000, '15000 B over 10 s: (1500 - 1000) / 1000 x 10 000 ms');
  clock.nowMs += 500;
  // 20000 B over 10.5 s = 1904.76 B/s: (1904.76 - 1000) / 1000 x 10 500 = 9500 ms.
  assert.equal(quota.recordAndGetThrottleTimeMs('u', 'c1', 5000), 9500);
  quota.unrecord('u', 'c1', 20_000);
  assert.equal(quota.recordAndGetThrottleTimeMs('u', 'c1', 0), 0, 'unrecorded bytes no longer count');
  assert.equal(quota.maxValueInQuotaWindow('u', 'c1'), 10_000);
  assert.equal(quota.recordAndGetThrottleTimeMs('u', 'other', 1e9), 0, 'another client id has no quota');
});

test('samples older than quota.window.num windows expire', () => {
  const clock = { nowMs: 0 };
  const quota = manager([[undefined, null, 100]], clock);
  assert.ok(quota.recordAndGetThrottleTimeMs('u', 'c', 5000) > 0);
  clock.nowMs += 11_000;
  assert.equal(quota.recordAndGetThrottleTimeMs('u', 'c', 10), 0);
});

test('the most specific entity applies, in Kafka\'s order', () => {
  const all: [Side, Side, number][] = [
    ['alice', 'c1', 1], ['alice', null, 2], ['alice', undefined, 3], [null, 'c1', 4], [null, null, 5], [null, undefined, 6], [undefined, 'c1', 7], [undefined, null, 8],
  ];
  // Each step removes the entity that applied, so the next one in the order takes over.
  for (let applied = 0; applied < all.length; applied++) {
    const quota = manager(all.slice(applied));
    assert.equal(quota.maxValueInQuotaWindow('alice', 'c1'), all[applied]![2] * 10, `entity ${applied} applies`);
  }
});

test('Rate counts a young window as quota.window.num - 1 full windows', () => {
  const rate = new Rate(WINDOWS);
  rate.record(1000, 0);
  assert.equal(rate.windowMs(0), 10_000);
  assert.equal(rate.measure(2500), 1000 / 10.5, '2.5 s elapsed, 2 full windows: 8 more are counted');
  assert.equal(rate.windowMs(10_500), 10_500, 'past 10 full windows the elapsed time is the window');
  assert.equal(rate.windowMs(30_000), 10_000, 'every sample expired: a fresh window again');
});
