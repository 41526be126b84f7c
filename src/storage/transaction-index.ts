/**
 * TransactionIndex: the `.txnindex` file, the aborted transactions whose
 * abort marker lies in this segment; a read_committed fetch returns the ones
 * overlapping its range so the consumer can drop their records.
 *
 * Format (Kafka's AbortedTxn, byte-compatible): 34-byte entries, big-endian
 *   int16 version            0
 *   int64 producerId
 *   int64 firstOffset        first offset of the aborted transaction
 *   int64 lastOffset         offset of the abort marker
 *   int64 lastStableOffset   the LSO when the marker was written
 * Entries are in increasing lastOffset order. Unlike the other two indexes
 * the file is not capped, and it is only created once it has an entry.
 *
 * Search rule: `collectAbortedTxns(fetchOffset, upperBoundOffset)` returns
 * entries with lastOffset >= fetchOffset and firstOffset < upperBoundOffset,
 * and reports the search complete once an entry's lastStableOffset reaches
 * the upper bound (later segments cannot hold overlapping ones).
 *
 * Crash policy: see IndexFile. Entries are derived from control batches and
 * producer state, which the producer-state layer replays on recovery; this
 * class drops entries past the recovered log end and rejects a file that is
 * not whole entries or holds a bad version or order.
 */
import type { FileSystem } from '../io/fs.js';
import { readInt64, writeInt64 } from '../protocol/int64.js';
import { CorruptIndexError, InvalidOffsetError } from './errors.js';
import { IndexFile } from './index-file.js';

export const TXN_INDEX_ENTRY_BYTES = 34;
const TXN_INDEX_VERSION = 0;

export interface AbortedTxn {
  producerId: number;
  firstOffset: number;
  lastOffset: number;
  lastStableOffset: number;
}

export interface TxnIndexSearchResult {
  abortedTransactions: AbortedTxn[];
  isComplete: boolean;
}

export class TransactionIndex extends IndexFile {
  constructor(fs: FileSystem, path: string, baseOffset: number) {
    super(fs, path, baseOffset, Infinity, TXN_INDEX_ENTRY_BYTES);
    this.createWhenEmpty = false;
  }

  entry(entry: number): AbortedTxn {
    const at = entry * TXN_INDEX_ENTRY_BYTES;
    return {
      producerId: readInt64(this.buffer, at + 2),
      firstOffset: readInt64(this.buffer, at + 10),
      lastOffset: readInt64(this.buffer, at + 18),
      lastStableOffset: readInt64(this.buffer, at + 26),
    };
  }

  versionAt(entry: number): number {
    return this.buffer.readInt16BE(entry * TXN_INDEX_ENTRY_BYTES);
  }

  allEntries(): AbortedTxn[] {
    const result: AbortedTxn[] = [];
    for (let entry = 0; entry < this.entries; entry++) result.push(this.entry(entry));
    return result;
  }

  append(abortedTxn: AbortedTxn): void {
    if (this.entries > 0 && this.lastOffsetAt(this.entries - 1) >= abortedTxn.lastOffset) {
      throw new InvalidOffsetError(
        `aborted transaction lastOffset ${abortedTxn.lastOffset} is not after ${this.lastOffsetAt(this.entries - 1)} in ${this.path}`,
      );
    }
    const at = this.nextEntryPosition();
    this.buffer.writeInt16BE(TXN_INDEX_VERSION, at);
    writeInt64(this.buffer, at + 2, abortedTxn.producerId);
    writeInt64(this.buffer, at + 10, abortedTxn.firstOffset);
    writeInt64(this.buffer, at + 18, abortedTxn.lastOffset);
    writeInt64(this.buffer, at + 26, abortedTxn.lastStableOffset);
  }

  collectAbortedTxns(fetchOffset: number, upperBoundOffset: number): TxnIndexSearchResult {
    const abortedTransactions: AbortedTxn[] = [];
    for (let entry = 0; entry < this.entries; entry++) {
      const txn = this.entry(entry);
      if (txn.lastOffset >= fetchOffset && txn.firstOffset < upperBoundOffset) abortedTransactions.push(txn);
      if (txn.lastStableOffset >= upperBoundOffset) return { abortedTransactions, isComplete: true };
    }
    return { abortedTransactions, isComplete: false };
  }

  /** Removes entries whose abort marker is at or after `offset`. */
  truncateTo(offset: number): void {
    let kept = this.entries;
    while (kept > 0 && this.lastOffsetAt(kept - 1) >= offset) kept--;
    this.truncateToEntries(kept);
  }

  /** Throws CorruptIndexError unless every entry has version 0, markers increase and lie in [baseOffset, nextOffset). */
  sanityCheck(nextOffset: number): void {
    let previous = -1;
    for (let entry = 0; entry < this.entries; entry++) {
      const txn = this.entry(entry);
      if (this.versionAt(entry) !== TXN_INDEX_VERSION) {
        throw new CorruptIndexError(`${this.path}: entry ${entry} has version ${this.versionAt(entry)}`);
      }
      if (txn.lastOffset <= previous || txn.lastOffset < this.baseOffset || txn.lastOffset >= nextOffset) {
        throw new CorruptIndexError(`${this.path}: entry ${entry} has abort marker offset ${txn.lastOffset} out of order or range`);
      }
      if (txn.firstOffset > txn.lastOffset) {
        throw new CorruptIndexError(`${this.path}: entry ${entry} starts at ${txn.firstOffset}, after its marker ${txn.lastOffset}`);
      }
      previous = txn.lastOffset;
    }
  }

  private lastOffsetAt(entry: number): number {
    return readInt64(this.buffer, entry * TXN_INDEX_ENTRY_BYTES + 18);
  }

}
