/**
 * CleanedTransactionMetadata: what the cleaner knows of transactions while
 * it reads batches in offset order (Kafka's class of the same name).
 *
 * Fed the aborted transactions (from the `.txnindex` files) overlapping the
 * range read, it tells for each data batch whether it belongs to an aborted
 * transaction (then its records go, and they never enter the key map), and
 * for each marker whether it may go:
 * - an ABORT marker stays while this pass still saw batches of its
 *   transaction (it then re-enters the cleaned segment's `.txnindex`);
 *   once they are all gone it may be discarded;
 * - a COMMIT marker may be discarded when this pass saw no batch of its
 *   transaction (all its records were cleaned away before);
 * - an empty control batch (a marker already emptied) may be discarded.
 * A discardable marker is not dropped at once: the cleaner gives its batch a
 * delete horizon (KIP-534, as for tombstones) and drops it at the first pass
 * after that horizon, so a consumer in the middle of the log still sees it.
 */
import { readControlRecord } from '../../protocol/records/control.js';
import type { BatchHeader } from '../../protocol/records/batch.js';
import type { Record } from '../../protocol/records/records.js';
import type { AbortedTxn } from '../transaction-index.js';

interface OngoingAbortedTxn {
  abortedTxn: AbortedTxn;
  /** Whether this pass read a data batch of the transaction. */
  batchObserved: boolean;
}

export class CleanedTransactionMetadata {
  /** Not yet reached, by first offset (Kafka keeps a min-heap). */
  private pending: AbortedTxn[] = [];
  private readonly ongoingAborted = new Map<number, OngoingAbortedTxn>();
  private readonly ongoingCommitted = new Set<number>();

  /** @param cleanedIndex receives the aborted transactions whose ABORT marker the cleaned segment keeps. */
  constructor(private readonly cleanedIndex: ((abortedTxn: AbortedTxn) => void) | null = null) {}

  addAbortedTransactions(abortedTransactions: readonly AbortedTxn[]): void {
    this.pending = [...this.pending, ...abortedTransactions].sort((a, b) => a.firstOffset - b.firstOffset);
  }

  /** A data batch was read; true when it belongs to an aborted transaction (its records may be discarded). */
  onBatchRead(header: BatchHeader): boolean {
    this.consumeAbortedTxnsUpTo(header.lastOffset);
    if (!header.isTransactional) return false;
    const aborted = this.ongoingAborted.get(header.producerId);
    if (aborted !== undefined) {
      aborted.batchObserved = true;
      return true;
    }
    this.ongoingCommitted.add(header.producerId);
    return false;
  }

  /** A control batch was read (`records`: its decoded records); true when the marker may be discarded. */
  onControlBatchRead(header: BatchHeader, records: readonly Record[]): boolean {
    this.consumeAbortedTxnsUpTo(header.lastOffset);
    const first = records[0];
    // An empty control batch was emptied by an earlier pass: nothing to keep.
    if (first === undefined) return true;
    const control = readControlRecord(first);
    if ('code' in control) return false;
    if (control.type === 'ABORT') {
      const aborted = this.ongoingAborted.get(header.producerId);
      this.ongoingAborted.delete(header.producerId);
      // The marker stays until every batch of its transaction is gone.
      if (aborted !== undefined && aborted.batchObserved) {
        this.cleanedIndex?.(aborted.abortedTxn);
        return false;
      }
      return true;
    }
    if (control.type === 'COMMIT') return !this.ongoingCommitted.delete(header.producerId);
    return false;
  }

  private consumeAbortedTxnsUpTo(offset: number): void {
    let consumed = 0;
    for (; consumed < this.pending.length && this.pending[consumed]!.firstOffset <= offset; consumed++) {
      const abortedTxn = this.pending[consumed]!;
      if (!this.ongoingAborted.has(abortedTxn.producerId)) this.ongoingAborted.set(abortedTxn.producerId, { abortedTxn, batchObserved: false });
    }
    if (consumed > 0) this.pending = this.pending.slice(consumed);
  }
}
