/**
 * kill -9 after transactions, then restart on the same data dir: a
 * read_committed consumer still does not see the aborted record, the
 * committed ones are there, and the restarted coordinator serves the same
 * transactional.id again (a new producer initializes and commits).
 *
 * Regression: the .txnindex entry of an aborted transaction lived only in
 * memory until the next flush, so after a kill -9 the aborted record became
 * visible to read_committed consumers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { javaDriverArgs, javaDriverMissing } from './java-client.js';
import { missingToolSkip } from './scenario.js';
import { freePort, startSpool, type SpoolProcess } from './spool-process.js';

const run = promisify(execFile);

async function txnDriver(args: readonly string[]): Promise<unknown> {
  const base = javaDriverArgs([]);
  const { stdout } = await run('java', [...base.slice(0, -1), 'TxnDriver', ...args], { timeout: 180_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!);
}

test('kill -9 after an aborted transaction: read_committed still skips it after the restart', { timeout: 300_000 }, async (t) => {
  const missing = javaDriverMissing();
  const skip = missingToolSkip(missing === undefined, missing ?? '');
  if (skip !== undefined) return t.skip(skip);
  const dir = mkdtempSync(join(tmpdir(), 'spool-txn-crash-'));
  const port = await freePort();
  let spool: SpoolProcess = await startSpool({ dir, port });
  try {
    const before = await txnDriver(['abort-invisible', spool.bootstrap, 'crash-txn', 'crash-txn-id']);
    assert.deepEqual(before, { committed: ['a', 'c'], uncommitted: ['a', 'b', 'c'] });
    await spool.kill9();
    spool = await startSpool({ dir, port });
    assert.deepEqual(await txnDriver(['read', spool.bootstrap, 'crash-txn']), before, 'the same records visible after the restart');
    const again = await txnDriver(['abort-invisible', spool.bootstrap, 'crash-txn', 'crash-txn-id']);
    assert.deepEqual(again, { committed: ['a', 'c', 'a', 'c'], uncommitted: ['a', 'b', 'c', 'a', 'b', 'c'] }, 'the restarted coordinator serves the id');
  } finally {
    assert.equal(await spool.stop({ keepDir: true }), 0);
    rmSync(dir, { recursive: true, force: true });
  }
});
