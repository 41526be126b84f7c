/**
 * TransactionIndex: Kafka's 34-byte AbortedTxn layout, the overlap search
 * with its completion rule, truncation, lazy file creation and sanity checks.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CorruptIndexError, InvalidOffsetError } from '../../src/storage/errors.js';
import { TransactionIndex } from '../../src/storage/transaction-index.js';
import { simEnv } from './helpers.js';

describe('TransactionIndex', () => {
  it('writes version, producerId, firstOffset, lastOffset, lastStableOffset big-endian', async () => {
    const { fs } = simEnv();
    await fs.mkdir('/i');
    const index = new TransactionIndex(fs, '/i/x.txnindex', 0);
    await index.flush();
    assert.equal(await fs.stat('/i/x.txnindex'), null, 'no file while empty');
    index.append({ producerId: 7, firstOffset: 10, lastOffset: 20, lastStableOffset: 10 });
    await index.flush();
    const bytes = await fs.readFile('/i/x.txnindex');
    assert.equal(bytes.length, 34);
    assert.equal(bytes.readInt16BE(0), 0);
    assert.deepEqual([bytes.readBigInt64BE(2), bytes.readBigInt64BE(10), bytes.readBigInt64BE(18), bytes.readBigInt64BE(26)], [7n, 10n, 20n, 10n]);
  });

  it('collects transactions overlapping [fetchOffset, upperBound) and stops once the LSO passes the bound', () => {
    const { fs } = simEnv();
    const index = new TransactionIndex(fs, '/i/x.txnindex', 0);
    index.append({ producerId: 1, firstOffset: 0, lastOffset: 5, lastStableOffset: 0 });
    index.append({ producerId: 2, firstOffset: 8, lastOffset: 12, lastStableOffset: 6 });
    index.append({ producerId: 3, firstOffset: 20, lastOffset: 30, lastStableOffset: 25 });
    const middle = index.collectAbortedTxns(6, 15);
    assert.deepEqual(middle.abortedTransactions.map((t) => t.producerId), [2]);
    assert.equal(middle.isComplete, true);
    const all = index.collectAbortedTxns(0, 100);
    assert.deepEqual(all.abortedTransactions.map((t) => t.producerId), [1, 2, 3]);
    assert.equal(all.isComplete, false);
    assert.throws(() => index.append({ producerId: 4, firstOffset: 1, lastOffset: 30, lastStableOffset: 1 }), InvalidOffsetError);
    index.truncateTo(12);
    assert.equal(index.entries, 1);
  });

  it('sanityCheck rejects a bad version and markers outside the segment', () => {
    const { fs } = simEnv();
    const index = new TransactionIndex(fs, '/i/x.txnindex', 100);
    index.append({ producerId: 1, firstOffset: 90, lastOffset: 105, lastStableOffset: 90 });
    index.sanityCheck(106);
    assert.throws(() => index.sanityCheck(105), CorruptIndexError);
  });
});
