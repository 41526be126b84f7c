/**
 * OffsetIndex and TimeIndex: Kafka's entry layouts byte for byte, the floor
 * search rule, truncation, the entry cap, sanity checks that reject corrupt
 * files, and write-out that trims the file to its entries.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CorruptIndexError, InvalidOffsetError } from '../../src/storage/errors.js';
import { OffsetIndex } from '../../src/storage/offset-index.js';
import { TimeIndex } from '../../src/storage/time-index.js';
import { simEnv } from './helpers.js';

async function env() {
  const e = simEnv();
  await e.fs.mkdir('/i');
  return e;
}

describe('OffsetIndex', () => {
  it('stores (relative offset, position) as two big-endian int32s', async () => {
    const { fs } = await env();
    const index = new OffsetIndex(fs, '/i/00000000000000000100.index', 100, 1024);
    index.append(105, 4200);
    index.append(110, 9000);
    await index.flush();
    assert.deepEqual(await fs.readFile(index.path), Buffer.from([0, 0, 0, 5, 0, 0, 0x10, 0x68, 0, 0, 0, 10, 0, 0, 0x23, 0x28]));
  });

  it('looks up the greatest entry <= target, else (baseOffset, 0)', async () => {
    const { fs } = await env();
    const index = new OffsetIndex(fs, '/i/x.index', 100, 1024);
    for (let i = 1; i <= 10; i++) index.append(100 + i * 10, i * 1000);
    assert.deepEqual(index.lookup(99), { offset: 100, position: 0 });
    assert.deepEqual(index.lookup(109), { offset: 100, position: 0 });
    assert.deepEqual(index.lookup(110), { offset: 110, position: 1000 });
    assert.deepEqual(index.lookup(155), { offset: 150, position: 5000 });
    assert.deepEqual(index.lookup(10_000), { offset: 200, position: 10_000 });
  });

  it('rejects entries that do not increase', async () => {
    const { fs } = await env();
    const index = new OffsetIndex(fs, '/i/x.index', 0, 1024);
    index.append(5, 100);
    assert.throws(() => index.append(5, 200), InvalidOffsetError);
    assert.throws(() => index.append(6, 100), InvalidOffsetError);
  });

  it('is full at segment.index.bytes / 8 entries', async () => {
    const { fs } = await env();
    const index = new OffsetIndex(fs, '/i/x.index', 0, 20);
    index.append(1, 1);
    index.append(2, 2);
    assert.equal(index.isFull, true);
    assert.throws(() => index.append(3, 3), RangeError);
  });

  it('truncateTo drops entries at or after the offset and the file follows', async () => {
    const { fs } = await env();
    const index = new OffsetIndex(fs, '/i/x.index', 0, 1024);
    for (let i = 1; i <= 5; i++) index.append(i * 10, i * 100);
    await index.flush();
    index.truncateTo(30);
    assert.equal(index.entries, 2);
    index.append(35, 350);
    await index.flush();
    assert.equal((await fs.readFile(index.path)).length, 24);
    const reloaded = new OffsetIndex(fs, index.path, 0, 1024);
    await reloaded.load();
    assert.deepEqual(reloaded.lastEntry, { offset: 35, position: 350 });
  });

  it('load rejects a length that is not whole entries; sanityCheck rejects disorder and positions past the log', async () => {
    const { fs } = await env();
    const handle = await fs.open('/i/bad.index', 'readWrite');
    await handle.write([Buffer.alloc(12)], 0);
    await assert.rejects(new OffsetIndex(fs, '/i/bad.index', 0, 1024).load(), CorruptIndexError);
    const disordered = Buffer.alloc(16);
    disordered.writeInt32BE(10, 0);
    disordered.writeInt32BE(100, 4);
    disordered.writeInt32BE(5, 8);
    disordered.writeInt32BE(200, 12);
    await fs.writeFileAtomic('/i/dis.index', disordered);
    const index = new OffsetIndex(fs, '/i/dis.index', 0, 1024);
    await index.load();
    assert.throws(() => index.sanityCheck(1000), CorruptIndexError);
    const fine = new OffsetIndex(fs, '/i/fine.index', 0, 1024);
    fine.append(10, 500);
    assert.throws(() => fine.sanityCheck(500), CorruptIndexError);
    fine.sanityCheck(501);
  });
});

describe('TimeIndex', () => {
  it('stores (int64 timestamp, int32 relative offset) and appends only growing timestamps', async () => {
    const { fs } = await env();
    const index = new TimeIndex(fs, '/i/x.timeindex', 50, 1024);
    index.maybeAppend(1_700_000_000_000, 55);
    index.maybeAppend(1_700_000_000_000, 56);
    index.maybeAppend(1_700_000_000_500, 60);
    assert.equal(index.entries, 2);
    await index.flush();
    const bytes = await fs.readFile(index.path);
    assert.equal(bytes.length, 24);
    assert.equal(bytes.readBigInt64BE(12), 1_700_000_000_500n);
    assert.equal(bytes.readInt32BE(20), 10);
    assert.throws(() => index.maybeAppend(1_700_000_000_600, 59), InvalidOffsetError);
  });

  it('looks up the greatest timestamp <= target, else (NO_TIMESTAMP, baseOffset)', async () => {
    const { fs } = await env();
    const index = new TimeIndex(fs, '/i/x.timeindex', 0, 1024);
    index.maybeAppend(100, 3);
    index.maybeAppend(200, 7);
    assert.deepEqual(index.lookup(50), { timestamp: -1, offset: 0 });
    assert.deepEqual(index.lookup(150), { timestamp: 100, offset: 3 });
    assert.deepEqual(index.lookup(200), { timestamp: 200, offset: 7 });
    index.truncateTo(7);
    assert.deepEqual(index.lastEntry, { timestamp: 100, offset: 3 });
  });

  it('the final entry of an inactive segment may exceed the cap', async () => {
    const { fs } = await env();
    const index = new TimeIndex(fs, '/i/x.timeindex', 0, 12);
    index.maybeAppend(100, 1);
    assert.equal(index.isFull, true);
    index.maybeAppend(200, 2, { skipFullCheck: true });
    assert.equal(index.entries, 2);
  });

  it('sanityCheck rejects offsets past the segment end and non-increasing timestamps', async () => {
    const { fs } = await env();
    const index = new TimeIndex(fs, '/i/x.timeindex', 0, 1024);
    index.maybeAppend(100, 5);
    index.sanityCheck(6);
    assert.throws(() => index.sanityCheck(5), CorruptIndexError);
    const bytes = Buffer.alloc(24);
    bytes.writeBigInt64BE(200n, 0);
    bytes.writeBigInt64BE(100n, 12);
    await fs.writeFileAtomic('/i/bad.timeindex', bytes);
    const bad = new TimeIndex(fs, '/i/bad.timeindex', 0, 1024);
    await bad.load();
    assert.throws(() => bad.sanityCheck(100), CorruptIndexError);
  });
});
