/**
 * Rebuilds a log's producer state when the log is opened (Kafka's
 * rebuildProducerState): keep the snapshots inside (logStartOffset,
 * logEndOffset], load the newest, replay the batches after it, and take a
 * snapshot at the log end so the next start replays nothing.
 *
 * After a clean shutdown with no snapshot at all, the log was written by a
 * broker that had no idempotent producers to remember (a clean shutdown
 * always snapshots otherwise), so the state starts empty at the log end
 * without scanning, as Kafka does.
 *
 * Crash policy: the rebuilt state depends only on the recovered log and the
 * snapshots at or below its end, so it is the state of the log as recovered;
 * a crash during rebuild leaves at most an extra snapshot, dropped as stray
 * next time.
 */
import { BATCH_HEADER_BYTES, iterateBatches } from '../protocol/records/batch.js';
import { decodeRecords } from '../protocol/records/records.js';
import type { Log } from './log.js';
import { loadProducersFromBatches, type ProducerStateManager, type ReplayedBatch } from './producer-state.js';

/** Bytes read from the log per replay step. */
const REPLAY_READ_BYTES = 1024 * 1024;

export async function rebuildProducerState(
  log: Log,
  producerState: ProducerStateManager,
  options: { nowMs: number; hadCleanShutdown: boolean },
): Promise<void> {
  const logEndOffset = log.logEndOffset;
  await producerState.removeStraySnapshots(log.logSegments.map((segment) => segment.baseOffset));
  if (producerState.latestSnapshotOffset() === null && options.hadCleanShutdown) {
    await producerState.truncateFullyAndStartAt(logEndOffset);
    await producerState.takeSnapshot();
    return;
  }
  await producerState.truncateAndReload(log.logStartOffset, logEndOffset, options.nowMs);
  if (producerState.mapEndOffset < logEndOffset) await replay(log, producerState, logEndOffset);
  producerState.updateMapEndOffset(logEndOffset);
  await producerState.takeSnapshot();
}

async function replay(log: Log, producerState: ProducerStateManager, logEndOffset: number): Promise<void> {
  let offset = Math.max(producerState.mapEndOffset, log.logStartOffset);
  while (offset < logEndOffset) {
    const read = await log.read(offset, { maxBytes: REPLAY_READ_BYTES, maxOffset: logEndOffset, minOneMessage: true });
    const batches: ReplayedBatch[] = [];
    let next = offset;
    for (const { position, header } of iterateBatches(read.records)) {
      if (header.lastOffset < offset) continue;
      batches.push(header.isControl ? { header, endTxnMarker: endTxnMarkerOf(read.records.subarray(position, position + header.sizeBytes)) } : { header });
      next = header.lastOffset + 1;
    }
    if (next === offset) throw new Error(`${log.name}: producer state replay made no progress at offset ${offset}`);
    loadProducersFromBatches(producerState, batches);
    producerState.updateMapEndOffset(next);
    offset = next;
  }
}

/** The end-transaction marker of a control batch: key (version, type), value (version, coordinatorEpoch); null for another control type. */
export function endTxnMarkerOf(batch: Buffer): { coordinatorEpoch: number; isAborted: boolean } | null {
  if (batch.length <= BATCH_HEADER_BYTES) return null;
  const decoded = decodeRecords(batch, { checkCrc: false });
  const record = decoded.records?.[0];
  if (record === undefined || record.key === null || record.key.length < 4 || record.value === null || record.value.length < 6) return null;
  const type = record.key.readInt16BE(2);
  if (type !== 0 && type !== 1) return null;
  return { isAborted: type === 0, coordinatorEpoch: record.value.readInt32BE(2) };
}
