/**
 * KRaft snapshots: `<offset>-<epoch>.checkpoint` files in the
 * `__cluster_metadata-0` directory, offset zero-padded to 20 digits and
 * epoch to 10 (`00000000000000001234-0000000003.checkpoint`). The snapshot
 * holds the state after every record below `offset`; `epoch` is the leader
 * epoch of the last record it covers.
 *
 * Format (Kafka's RecordsSnapshotWriter): v2 record batches, offsets
 * starting at the snapshot offset, partitionLeaderEpoch = the snapshot
 * epoch:
 *   1. a control batch with a SnapshotHeaderRecord (lastContainedLogTimestamp),
 *      then, with kraft.version 1, a KRaftVersionRecord and the VotersRecord in
 *      force at the snapshot (KIP-853)
 *   2. data batches of records (null keys, serialized values)
 *   3. a control batch with a SnapshotFooterRecord
 *
 * Crash policy: a snapshot is written to a temporary file, fsynced and
 * renamed into place, then the directory is fsynced; a reader sees it whole
 * or not at all. Leftover temporary files are deleted on startup. A
 * snapshot without header or footer, or with a bad CRC, is corrupt and
 * refuses to load (it was renamed only after being complete).
 */
import { posix } from 'node:path';
import type { FileSystem } from '../io/fs.js';
import { iterateBatches, validateBatch } from '../protocol/records/batch.js';
import { readControlRecord } from '../protocol/records/control.js';
import { buildBatch, decodeRecords } from '../protocol/records/records.js';
import { buildRaftControlBatch, decodeControlValue, isRaftControlType, type RaftControlRecord } from './control-records.js';

export const SNAPSHOT_SUFFIX = '.checkpoint';
const SNAPSHOT_NAME = /^(\d{20})-(\d{10})\.checkpoint$/;
/** Records per data batch in a snapshot (keeps batches well under Kafka's 8 MiB raft batch limit). */
const SNAPSHOT_BATCH_RECORDS_MAX = 1000;

export interface OffsetAndEpoch {
  offset: number;
  epoch: number;
}

export interface RecordSerde<T> {
  encode(record: T): Buffer;
  decode(value: Buffer): T;
}

export class CorruptSnapshotError extends Error {
  override readonly name = 'CorruptSnapshotError';
}

export function snapshotFileName(id: OffsetAndEpoch): string {
  return `${String(id.offset).padStart(20, '0')}-${String(id.epoch).padStart(10, '0')}${SNAPSHOT_SUFFIX}`;
}

export function parseSnapshotFileName(name: string): OffsetAndEpoch | null {
  const match = SNAPSHOT_NAME.exec(name);
  if (match === null) return null;
  return { offset: Number(match[1]), epoch: Number(match[2]) };
}

export function compareSnapshotIds(a: OffsetAndEpoch, b: OffsetAndEpoch): number {
  return a.offset !== b.offset ? a.offset - b.offset : a.epoch - b.epoch;
}

/** Snapshot ids found in `dir`, oldest first; leftover temporary snapshot files are removed. */
export async function listSnapshots(fs: FileSystem, dir: string): Promise<OffsetAndEpoch[]> {
  const ids: OffsetAndEpoch[] = [];
  for (const name of await fs.readdir(dir)) {
    if (name.includes(SNAPSHOT_SUFFIX) && (name.endsWith('.tmp') || name.endsWith('.part') || name.endsWith('.deleted'))) {
      await fs.unlink(posix.join(dir, name));
      continue;
    }
    const id = parseSnapshotFileName(name);
    if (id !== null) ids.push(id);
  }
  return ids.sort(compareSnapshotIds);
}

export interface SnapshotContent<T> {
  id: OffsetAndEpoch;
  lastContainedLogTimestamp: number;
  records: T[];
  /** The KRaftVersionRecord and VotersRecord of the header batch (kraft.version 1); absent or empty with static voters. */
  kraftRecords?: RaftControlRecord[];
}

export async function writeSnapshot<T>(
  fs: FileSystem,
  dir: string,
  snapshot: SnapshotContent<T>,
  options: { serde: RecordSerde<T>; timestampMs: number },
): Promise<void> {
  const { id } = snapshot;
  const batches: Buffer[] = [];
  let offset = id.offset;
  const header: RaftControlRecord = { type: 'SNAPSHOT_HEADER', data: { version: 0, lastContainedLogTimestamp: snapshot.lastContainedLogTimestamp } };
  const headerBatch = [header, ...(snapshot.kraftRecords ?? [])];
  batches.push(buildRaftControlBatch(headerBatch, { baseOffset: offset, epoch: id.epoch, timestampMs: options.timestampMs }));
  offset += headerBatch.length;
  for (let start = 0; start < snapshot.records.length; start += SNAPSHOT_BATCH_RECORDS_MAX) {
    const chunk = snapshot.records.slice(start, start + SNAPSHOT_BATCH_RECORDS_MAX);
    batches.push(
      buildBatch({
        records: chunk.map((record) => ({ key: null, value: options.serde.encode(record), timestamp: options.timestampMs })),
        baseOffset: offset,
        partitionLeaderEpoch: id.epoch,
      }),
    );
    offset += chunk.length;
  }
  const footer = { type: 'SNAPSHOT_FOOTER' as const, data: { version: 0 } };
  batches.push(buildRaftControlBatch([footer], { baseOffset: offset, epoch: id.epoch, timestampMs: options.timestampMs }));
  await fs.writeFileAtomic(posix.join(dir, snapshotFileName(id)), Buffer.concat(batches));
  await fs.syncDir(dir);
}

export async function readSnapshot<T>(fs: FileSystem, dir: string, id: OffsetAndEpoch, serde: RecordSerde<T>): Promise<SnapshotContent<T>> {
  const path = posix.join(dir, snapshotFileName(id));
  const data = await fs.readFile(path);
  const records: T[] = [];
  const kraftRecords: RaftControlRecord[] = [];
  let header: number | null = null;
  let footer = false;
  let end = 0;
  for (const { position, header: batch } of iterateBatches(data)) {
    end = position + batch.sizeBytes;
    const problem = validateBatch(data, position, { origin: 'log' });
    if (problem !== null) throw new CorruptSnapshotError(`${path}: ${problem.message}`);
    if (footer) throw new CorruptSnapshotError(`${path}: data after the snapshot footer`);
    const decoded = decodeRecords(data.subarray(position, end));
    if (decoded.error !== null) throw new CorruptSnapshotError(`${path}: ${decoded.error.message}`);
    if (!batch.isControl) {
      if (header === null) throw new CorruptSnapshotError(`${path}: records before the snapshot header`);
      for (const record of decoded.records) records.push(serde.decode(record.value ?? Buffer.alloc(0)));
      continue;
    }
    for (const record of decoded.records) {
      const control = readControlRecord(record);
      if ('code' in control) throw new CorruptSnapshotError(`${path}: ${control.message}`);
      if (control.type === 'SNAPSHOT_HEADER' && isRaftControlType(control.type)) {
        const parsed = decodeControlValue('SNAPSHOT_HEADER', record.value ?? Buffer.alloc(0));
        if (parsed.type === 'SNAPSHOT_HEADER') header = parsed.data.lastContainedLogTimestamp;
      } else if (control.type === 'SNAPSHOT_FOOTER') {
        footer = true;
      } else if (control.type === 'KRAFT_VERSION' || control.type === 'KRAFT_VOTERS') {
        kraftRecords.push(decodeControlValue(control.type, record.value ?? Buffer.alloc(0)));
      }
    }
  }
  if (end !== data.length) throw new CorruptSnapshotError(`${path}: ${data.length - end} trailing bytes`);
  if (header === null || !footer) throw new CorruptSnapshotError(`${path}: missing snapshot ${header === null ? 'header' : 'footer'}`);
  return { id, lastContainedLogTimestamp: header, records, ...(kraftRecords.length > 0 ? { kraftRecords } : {}) };
}

export async function deleteSnapshot(fs: FileSystem, dir: string, id: OffsetAndEpoch): Promise<void> {
  await fs.unlink(posix.join(dir, snapshotFileName(id)));
}
