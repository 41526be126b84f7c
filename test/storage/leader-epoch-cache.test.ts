/**
 * LeaderEpochFileCache: Kafka's assign / truncate rules, endOffsetFor
 * answers for OffsetForLeaderEpoch, and the leader-epoch-checkpoint file.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LeaderEpochFileCache } from '../../src/storage/leader-epoch-cache.js';
import { silentStorageLogger } from '../../src/storage/log-config.js';
import { simEnv } from './helpers.js';

async function cache() {
  const env = simEnv();
  await env.fs.mkdir('/p');
  return { env, cache: await LeaderEpochFileCache.load(env.fs, '/p', silentStorageLogger) };
}

describe('LeaderEpochFileCache', () => {
  it('assign keeps increasing entries and replaces conflicting ones', async () => {
    const { cache: c } = await cache();
    assert.equal(c.assign(1, 0), true);
    assert.equal(c.assign(1, 5), false);
    assert.equal(c.assign(3, 10), true);
    assert.equal(c.assign(2, 7), true);
    assert.deepEqual(c.epochEntries, [{ epoch: 1, startOffset: 0 }, { epoch: 2, startOffset: 7 }]);
  });

  it('endOffsetFor follows Kafka: latest -> LEO, between -> next start, unknown -> -1', async () => {
    const { cache: c } = await cache();
    c.assign(2, 10);
    c.assign(4, 20);
    c.assign(7, 35);
    assert.deepEqual(c.endOffsetFor(7, 50), { leaderEpoch: 7, endOffset: 50 });
    assert.deepEqual(c.endOffsetFor(4, 50), { leaderEpoch: 4, endOffset: 35 });
    assert.deepEqual(c.endOffsetFor(5, 50), { leaderEpoch: 4, endOffset: 35 });
    assert.deepEqual(c.endOffsetFor(1, 50), { leaderEpoch: 1, endOffset: 10 });
    assert.deepEqual(c.endOffsetFor(8, 50), { leaderEpoch: -1, endOffset: -1 });
    assert.deepEqual(c.endOffsetFor(-1, 50), { leaderEpoch: -1, endOffset: -1 });
  });

  it('truncateFromStart keeps the covering epoch at the new start; truncateFromEnd drops later starts', async () => {
    const { cache: c } = await cache();
    c.assign(1, 0);
    c.assign(2, 10);
    c.assign(3, 20);
    c.truncateFromStart(15);
    assert.deepEqual(c.epochEntries, [{ epoch: 2, startOffset: 15 }, { epoch: 3, startOffset: 20 }]);
    c.truncateFromEnd(20);
    assert.deepEqual(c.epochEntries, [{ epoch: 2, startOffset: 15 }]);
    assert.equal(c.epochForOffset(16), 2);
    assert.equal(c.epochForOffset(3), null);
  });

  it('persists to leader-epoch-checkpoint and reloads; a corrupt file loads empty', async () => {
    const { env, cache: c } = await cache();
    c.assign(0, 0);
    c.assign(5, 100);
    await c.flush();
    assert.equal((await env.fs.readFile('/p/leader-epoch-checkpoint')).toString(), '0\n2\n0 0\n5 100\n');
    const reloaded = await LeaderEpochFileCache.load(env.fs, '/p', silentStorageLogger);
    assert.deepEqual(reloaded.epochEntries, c.epochEntries);
    await env.fs.writeFileAtomic('/p/leader-epoch-checkpoint', Buffer.from('0\n2\n5 100\n0 0\n'));
    assert.deepEqual((await LeaderEpochFileCache.load(env.fs, '/p', silentStorageLogger)).epochEntries, []);
  });
});
