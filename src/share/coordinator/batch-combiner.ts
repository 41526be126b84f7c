/**
 * How the share coordinator merges a share partition's state batches
 * (Kafka 4.4's PersisterStateBatchCombiner), on a write and when an update
 * record is replayed onto the state so far.
 *
 * 1. Prune: batches wholly below the start offset go; a batch straddling it
 *    is cut to begin there (start offset -1, not initialized: nothing goes).
 * 2. Sweep: where batches overlap, the offset takes the state of the batch
 *    with the highest delivery count, then the highest delivery state
 *    (ARCHIVED 4 > ACKNOWLEDGED 2 > AVAILABLE 0), whichever list it came
 *    from: delivery only moves forward, so the further-along state is the
 *    newer one. Adjacent runs of the same state and count are joined.
 *
 * The result is sorted by first offset, without overlaps, and no two
 * neighbours that touch carry the same state and count.
 */
import type { PersisterStateBatch } from '../persister.js';
import { UNINITIALIZED_START_OFFSET } from '../persister.js';

export function combineStateBatches(soFar: readonly PersisterStateBatch[], added: readonly PersisterStateBatch[], startOffset: number): PersisterStateBatch[] {
  const pruned = [...prune(soFar, startOffset), ...prune(added, startOffset)];
  if (pruned.length <= 1) return pruned;
  return sweepMerge(pruned);
}

function prune(batches: readonly PersisterStateBatch[], startOffset: number): PersisterStateBatch[] {
  if (startOffset === UNINITIALIZED_START_OFFSET) return [...batches];
  const out: PersisterStateBatch[] = [];
  for (const batch of batches) {
    if (batch.lastOffset < startOffset) continue;
    out.push(batch.firstOffset >= startOffset ? batch : { ...batch, firstOffset: startOffset });
  }
  return out;
}

interface SweepEvent {
  offset: number;
  begins: boolean;
  /** The batch's index in the pruned list (one batch may appear twice, as equal objects). */
  index: number;
}

/** Whether `a` wins over `b` where they overlap. */
function outranks(a: PersisterStateBatch, b: PersisterStateBatch): boolean {
  if (a.deliveryCount !== b.deliveryCount) return a.deliveryCount > b.deliveryCount;
  return a.deliveryState > b.deliveryState;
}

function sweepMerge(batches: readonly PersisterStateBatch[]): PersisterStateBatch[] {
  const events: SweepEvent[] = [];
  batches.forEach((batch, index) => {
    events.push({ offset: batch.firstOffset, begins: true, index }, { offset: batch.lastOffset + 1, begins: false, index });
  });
  events.sort((a, b) => a.offset - b.offset);
  const active = new Map<number, PersisterStateBatch>();
  const out: PersisterStateBatch[] = [];
  let openFrom = -1;
  let winner: PersisterStateBatch | null = null;
  for (let i = 0; i < events.length; ) {
    const offset = events[i]!.offset;
    if (winner !== null && offset > openFrom) appendCoalesced(out, { firstOffset: openFrom, lastOffset: offset - 1, deliveryState: winner.deliveryState, deliveryCount: winner.deliveryCount });
    for (; i < events.length && events[i]!.offset === offset; i++) {
      const event = events[i]!;
      if (event.begins) active.set(event.index, batches[event.index]!);
      else active.delete(event.index);
    }
    winner = null;
    for (const batch of active.values()) if (winner === null || outranks(batch, winner)) winner = batch;
    openFrom = offset;
  }
  return out;
}

function appendCoalesced(out: PersisterStateBatch[], run: PersisterStateBatch): void {
  const tail = out[out.length - 1];
  if (tail !== undefined && tail.lastOffset + 1 === run.firstOffset && tail.deliveryState === run.deliveryState && tail.deliveryCount === run.deliveryCount) {
    out[out.length - 1] = { ...tail, lastOffset: run.lastOffset };
    return;
  }
  out.push(run);
}
