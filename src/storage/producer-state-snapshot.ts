/**
 * Producer state snapshot files: `<offset>.snapshot` in a partition directory,
 * byte-compatible with Kafka's (ProducerSnapshot, version 1).
 *
 * The name is the 20-digit log offset the snapshot covers up to (exclusive):
 * it holds the state of every producer after replaying the log below that
 * offset, so loading it and replaying the log from that offset rebuilds the
 * state at the log end.
 *
 * Layout, big-endian:
 *
 *   0  version               int16   1
 *   2  crc                   uint32  CRC-32C of bytes 6..end
 *   6  entryCount            int32
 *  10  entries, 46 bytes each:
 *        producerId             int64
 *        epoch                  int16
 *        lastSequence           int32
 *        lastOffset             int64   -1 when the producer has no batch retained
 *        offsetDelta            int32   lastOffset - firstOffset of that batch
 *        timestamp              int64   max timestamp of the producer's last batch
 *        coordinatorEpoch       int32
 *        currentTxnFirstOffset  int64   -1 when no transaction is open
 *
 * Only the producer's last batch survives in a snapshot (as in Kafka); the
 * batches after the snapshot offset come back by replaying the log.
 *
 * Crash policy: a snapshot is written to a temporary file, synced and renamed
 * into place, so a crash leaves either the complete file or none. A file that
 * fails its CRC or framing check is reported as CorruptSnapshotError; the
 * loader deletes it and falls back to an older snapshot or a full replay.
 */
import { posix } from 'node:path';
import { readInt64, writeInt64 } from '../protocol/int64.js';
import { crc32c } from '../protocol/records/batch.js';
import { filenamePrefixFromOffset } from './file-names.js';

export const PRODUCER_SNAPSHOT_FILE_SUFFIX = '.snapshot';
export const PRODUCER_SNAPSHOT_VERSION = 1;

const VERSION_OFFSET = 0;
const CRC_OFFSET = 2;
const ENTRIES_OFFSET = 6;
const ENTRY_BYTES = 8 + 2 + 4 + 8 + 4 + 8 + 4 + 8;

/** One producer as a snapshot stores it. */
export interface ProducerSnapshotEntry {
  producerId: number;
  epoch: number;
  lastSequence: number;
  /** -1 when no batch is retained. */
  lastOffset: number;
  offsetDelta: number;
  timestampMs: number;
  coordinatorEpoch: number;
  /** -1 when no transaction is open. */
  currentTxnFirstOffset: number;
}

export class CorruptSnapshotError extends Error {
  override readonly name = 'CorruptSnapshotError';
}

export function producerSnapshotPath(dir: string, offset: number): string {
  return posix.join(dir, filenamePrefixFromOffset(offset) + PRODUCER_SNAPSHOT_FILE_SUFFIX);
}

/** The offset a snapshot file name encodes, or null for other names. */
export function offsetFromSnapshotFileName(name: string): number | null {
  const match = /^(\d{20})\.snapshot$/.exec(name);
  if (match === null) return null;
  const offset = Number(match[1]);
  return Number.isSafeInteger(offset) ? offset : null;
}

export function encodeProducerSnapshot(entries: readonly ProducerSnapshotEntry[]): Buffer {
  const buffer = Buffer.alloc(ENTRIES_OFFSET + 4 + entries.length * ENTRY_BYTES);
  buffer.writeInt16BE(PRODUCER_SNAPSHOT_VERSION, VERSION_OFFSET);
  buffer.writeInt32BE(entries.length, ENTRIES_OFFSET);
  let at = ENTRIES_OFFSET + 4;
  for (const entry of entries) {
    writeInt64(buffer, at, entry.producerId);
    buffer.writeInt16BE(entry.epoch, at + 8);
    buffer.writeInt32BE(entry.lastSequence, at + 10);
    writeInt64(buffer, at + 14, entry.lastOffset);
    buffer.writeInt32BE(entry.offsetDelta, at + 22);
    writeInt64(buffer, at + 26, entry.timestampMs);
    buffer.writeInt32BE(entry.coordinatorEpoch, at + 34);
    writeInt64(buffer, at + 38, entry.currentTxnFirstOffset);
    at += ENTRY_BYTES;
  }
  if (at !== buffer.length) throw new Error(`snapshot encoder wrote ${at} of ${buffer.length} bytes`);
  buffer.writeUInt32BE(crc32c(buffer.subarray(ENTRIES_OFFSET)), CRC_OFFSET);
  return buffer;
}

/** Decodes a snapshot file's bytes; throws CorruptSnapshotError on any framing or CRC problem. */
export function decodeProducerSnapshot(buffer: Buffer): ProducerSnapshotEntry[] {
  if (buffer.length < ENTRIES_OFFSET + 4) throw new CorruptSnapshotError(`snapshot has ${buffer.length} bytes, fewer than its header`);
  const version = buffer.readInt16BE(VERSION_OFFSET);
  if (version !== PRODUCER_SNAPSHOT_VERSION) throw new CorruptSnapshotError(`snapshot has unknown version ${version}`);
  const stored = buffer.readUInt32BE(CRC_OFFSET);
  const computed = crc32c(buffer.subarray(ENTRIES_OFFSET));
  if (stored !== computed) throw new CorruptSnapshotError(`snapshot is corrupt (stored crc = ${stored}, computed crc = ${computed})`);
  const count = buffer.readInt32BE(ENTRIES_OFFSET);
  if (count < 0 || ENTRIES_OFFSET + 4 + count * ENTRY_BYTES !== buffer.length) {
    throw new CorruptSnapshotError(`snapshot declares ${count} entries in ${buffer.length} bytes`);
  }
  const entries: ProducerSnapshotEntry[] = [];
  for (let at = ENTRIES_OFFSET + 4; at < buffer.length; at += ENTRY_BYTES) {
    entries.push({
      producerId: readInt64(buffer, at),
      epoch: buffer.readInt16BE(at + 8),
      lastSequence: buffer.readInt32BE(at + 10),
      lastOffset: readInt64(buffer, at + 14),
      offsetDelta: buffer.readInt32BE(at + 22),
      timestampMs: readInt64(buffer, at + 26),
      coordinatorEpoch: buffer.readInt32BE(at + 34),
      currentTxnFirstOffset: readInt64(buffer, at + 38),
    });
  }
  return entries;
}
