/**
 * SimFileSystem: reads see every write; a crash keeps only what was synced
 * (file data by FileHandle.sync, directory entries by syncDir), or a random
 * prefix of the unsynced operations with the last write torn; injected
 * faults and the capacity limit fail calls like ENOSPC / EIO would; a
 * scheduled power cut crashes at the chosen call and fails calls until
 * power is back.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SeededRandom } from '../../src/io/random.js';
import { SimFileSystem } from '../../src/io/sim-fs.js';

async function freshFs(seed = 7): Promise<SimFileSystem> {
  const fs = new SimFileSystem(new SeededRandom(seed));
  await fs.mkdir('/d');
  await fs.syncDir('/');
  return fs;
}

describe('SimFileSystem', () => {
  it('keeps a directory synced before its parent once the parent is synced too (regression: the child was lost)', async () => {
    const fs = new SimFileSystem(new SeededRandom(1));
    await fs.mkdir('/a/b/c');
    const handle = await fs.open('/a/b/c/f', 'readWrite');
    await handle.write([Buffer.from('kept')], 0);
    await handle.sync();
    await fs.writeFileAtomic('/a/b/c/renamed', Buffer.from('atomic'));
    for (const dir of ['/a/b/c', '/a/b', '/a', '/']) await fs.syncDir(dir);
    fs.crash();
    assert.deepEqual(await fs.readFile('/a/b/c/f'), Buffer.from('kept'));
    assert.deepEqual(await fs.readdir('/a/b/c'), ['f', 'renamed']);
  });

  it('loses the synced entries of a directory whose own entry never became durable', async () => {
    const fs = new SimFileSystem(new SeededRandom(1));
    await fs.mkdir('/a/b');
    await fs.syncDir('/a/b');
    await fs.syncDir('/');
    fs.crash();
    assert.deepEqual(await fs.readdir('/a'), []);
    assert.equal(await fs.stat('/a/b'), null);
  });

  it('reads back writes at any position, zero-filling gaps', async () => {
    const fs = await freshFs();
    const handle = await fs.open('/d/f', 'readWrite');
    await handle.write([Buffer.from('abc'), Buffer.from('de')], 0);
    await handle.write([Buffer.from('z')], 7);
    assert.deepEqual(await fs.readFile('/d/f'), Buffer.from('abcde\0\0z'));
    const buffer = Buffer.alloc(4);
    assert.equal(await handle.read(buffer, 6), 2);
    assert.equal(await handle.size(), 8);
    await handle.truncate(2);
    assert.deepEqual(await fs.readFile('/d/f'), Buffer.from('ab'));
  });

  it('a crash drops unsynced data and unsynced directory entries', async () => {
    const fs = await freshFs();
    const synced = await fs.open('/d/synced', 'readWrite');
    await synced.write([Buffer.from('durable')], 0);
    await synced.sync();
    await fs.syncDir('/d');
    await synced.write([Buffer.from('-volatile')], 7);
    const unlisted = await fs.open('/d/unlisted', 'readWrite');
    await unlisted.write([Buffer.from('x')], 0);
    await unlisted.sync();
    fs.crash();
    assert.deepEqual(await fs.readFile('/d/synced'), Buffer.from('durable'));
    assert.equal(await fs.stat('/d/unlisted'), null);
    await assert.rejects(synced.read(Buffer.alloc(1), 0), { code: 'EBADF' });
  });

  it('a rename becomes durable with syncDir, and writeFileAtomic never leaves a torn file', async () => {
    const fs = await freshFs();
    await fs.writeFileAtomic('/d/cp', Buffer.from('one'));
    await fs.syncDir('/d');
    await fs.writeFileAtomic('/d/cp', Buffer.from('two'));
    fs.crash();
    assert.deepEqual(await fs.readFile('/d/cp'), Buffer.from('one'));
  });

  it('a torn crash keeps a prefix of the unsynced writes, in order', async () => {
    for (let seed = 0; seed < 50; seed++) {
      const fs = await freshFs(seed);
      const handle = await fs.open('/d/f', 'readWrite');
      await handle.sync();
      await fs.syncDir('/d');
      const written: Buffer[] = [];
      for (let i = 0; i < 5; i++) {
        const chunk = Buffer.alloc(10, 65 + i);
        written.push(chunk);
        await handle.write([chunk], i * 10);
      }
      const report = fs.crash({ keepUnsyncedPrefix: true });
      const content = await fs.readFile('/d/f');
      assert.deepEqual(content, Buffer.concat(written).subarray(0, content.length), `seed ${seed}`);
      const expected = report.keptOperations * 10 + Math.max(0, report.tornWriteBytes);
      assert.equal(content.length, expected, `seed ${seed}`);
    }
  });

  it('injected faults fail the chosen call, with an optional short write', async () => {
    const fs = await freshFs();
    const handle = await fs.open('/d/f', 'readWrite');
    fs.injectFault({ operation: 'write', code: 'EIO', pathIncludes: '/d/f', partialBytes: 2 });
    await assert.rejects(handle.write([Buffer.from('hello')], 0), { code: 'EIO' });
    assert.deepEqual(await fs.readFile('/d/f'), Buffer.from('he'));
    await handle.write([Buffer.from('hello')], 0);
    fs.injectFault({ operation: 'sync', code: 'EIO', skip: 1 });
    await handle.sync();
    await assert.rejects(handle.sync(), { code: 'EIO' });
  });

  it('a scheduled power cut crashes at the chosen call, fails every call until powerOn, and keeps what was synced', async () => {
    const fs = await freshFs();
    const handle = await fs.open('/d/f', 'readWrite');
    await handle.write([Buffer.from('synced')], 0);
    await handle.sync();
    await fs.syncDir('/d');
    fs.schedulePowerCut({ afterCalls: 1 });
    await handle.write([Buffer.from('-lost')], 6);
    await assert.rejects(handle.sync(), /EIO/);
    assert.equal(fs.isPoweredOff, true);
    await assert.rejects(fs.readFile('/d/f'), /EIO/);
    assert.deepEqual(fs.lastPowerCut, { pendingOperations: 1, keptOperations: 0, tornWriteBytes: -1 });
    fs.powerOn();
    assert.deepEqual(await fs.readFile('/d/f'), Buffer.from('synced'));
    await assert.rejects(handle.write([Buffer.from('x')], 0), /EBADF/, 'handles from before the cut are gone');
  });

  it('the capacity limit turns a growing write into a short write plus ENOSPC', async () => {
    const fs = await freshFs();
    fs.setCapacityBytes(8);
    const handle = await fs.open('/d/f', 'readWrite');
    await handle.write([Buffer.from('12345')], 0);
    await assert.rejects(handle.write([Buffer.from('67890')], 5), { code: 'ENOSPC' });
    assert.deepEqual(await fs.readFile('/d/f'), Buffer.from('12345678'));
    await handle.write([Buffer.from('ab')], 0);
  });

  it('corrupt() zeroes or garbles a region of both contents', async () => {
    const fs = await freshFs();
    const handle = await fs.open('/d/f', 'readWrite');
    await handle.write([Buffer.alloc(16, 1)], 0);
    await handle.sync();
    await fs.syncDir('/d');
    fs.corrupt('/d/f', { position: 4, length: 4, mode: 'zero' });
    fs.crash();
    const content = await fs.readFile('/d/f');
    assert.deepEqual(content.subarray(4, 8), Buffer.alloc(4));
    assert.deepEqual(content.subarray(0, 4), Buffer.alloc(4, 1));
  });

  it('directories: readdir, removeTree, rename of a directory', async () => {
    const fs = await freshFs();
    await fs.mkdir('/d/a/b');
    await (await fs.open('/d/a/b/f', 'readWrite')).write([Buffer.from('x')], 0);
    assert.deepEqual(await fs.readdir('/d/a'), ['b']);
    await fs.rename('/d/a', '/d/c');
    assert.deepEqual(await fs.readFile('/d/c/b/f'), Buffer.from('x'));
    assert.equal(await fs.stat('/d/a'), null);
    await fs.removeTree('/d/c');
    assert.deepEqual(await fs.readdir('/d'), []);
    await assert.rejects(fs.open('/d/missing', 'read'), { code: 'ENOENT' });
  });
});
