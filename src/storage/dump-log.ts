/**
 * `spool dump-log`: what `kafka-dump-log.sh` (Kafka's DumpLogSegments)
 * prints for segment files, in Kafka's line formats so scripts that parse
 * Kafka's output parse Spool's:
 *
 *   .log        "Log starting offset: N", then per batch
 *               "baseOffset: .. lastOffset: .. count: .. baseSequence: ..
 *                lastSequence: .. producerId: .. producerEpoch: ..
 *                partitionLeaderEpoch: .. isTransactional: .. isControl: ..
 *                deleteHorizonMs: .. position: .. CreateTime: .. size: ..
 *                magic: .. compresscodec: .. crc: .. isvalid: .."
 *               and with --print-data-log (or --deep-iteration) per record
 *               "| offset: .. CreateTime: .. keySize: .. valueSize: ..
 *                sequence: .. headerKeys: [..] key: .. payload: .."
 *   .index      "offset: N position: M" per entry
 *   .timeindex  "timestamp: T offset: N" per entry
 *   .txnindex   "version: .. producerId: .. firstOffset: .. lastOffset: .. lastStableOffset: .."
 *   .snapshot   producer state entries
 *   cleaner-offset-checkpoint (Spool's addition; Kafka's tool ignores it)
 *               per compacted partition "topic: .. partition: ..
 *               firstDirtyOffset: .. cleanBytes: .. dirtyBytes: ..
 *               dirtyRatio: .." from the checkpoint and the segment files
 * --index-sanity-check prints "<file> passed sanity check." (or why not)
 * instead of the entries. Index entries are verified against the log and
 * mismatches reported on stderr, as Kafka does.
 *
 * Reads files through the FileSystem seam; never writes.
 */
import { posix } from 'node:path';
import type { FileSystem } from '../io/fs.js';
import { int64Text } from '../protocol/int64.js';
import { crc32c, BATCH_FIELD, type BatchHeader } from '../protocol/records/batch.js';
import { compressionName } from '../protocol/records/compression.js';
import { readControlRecord } from '../protocol/records/control.js';
import { decodeRecords, type Record } from '../protocol/records/records.js';
import { decrementSequence, incrementSequence } from '../protocol/records/sequence.js';
import { BatchScanner } from './batch-scanner.js';
import { CorruptCheckpointError, offsetCheckpointFormat, readCheckpointFile, type TopicPartitionOffset } from './checkpoint-file.js';
import { CLEANER_OFFSET_CHECKPOINT_FILE } from './cleaner/log-cleaner-manager.js';
import { CorruptIndexError } from './errors.js';
import {
  INDEX_FILE_SUFFIX,
  LOG_FILE_SUFFIX,
  TIME_INDEX_FILE_SUFFIX,
  TXN_INDEX_FILE_SUFFIX,
  offsetFromFileName,
  partitionDirName,
} from './file-names.js';
import { OffsetIndex } from './offset-index.js';
import { decodeProducerSnapshot, PRODUCER_SNAPSHOT_FILE_SUFFIX } from './producer-state-snapshot.js';
import { TimeIndex } from './time-index.js';
import { TransactionIndex } from './transaction-index.js';

/** Turns a record's key and value into text (Kafka's --key-decoder-class / --value-decoder-class, --offsets-decoder). */
export interface RecordParser {
  /** [key, payload]; undefined parts are not printed. */
  parse(record: Record): { key?: string; payload?: string };
}

/** Kafka's default: UTF-8 strings; a record without a value prints neither key nor payload. */
export const stringRecordParser: RecordParser = {
  parse(record) {
    if (record.value === null) return {};
    return {
      ...(record.key === null ? {} : { key: record.key.toString('utf8') }),
      payload: record.value.toString('utf8'),
    };
  },
};

export interface DumpLogOptions {
  files: readonly string[];
  /** --print-data-log: records with keys and payloads. */
  printDataLog?: boolean;
  /** --deep-iteration: records without payloads. */
  deepIteration?: boolean;
  /** --index-sanity-check: only check indexes. */
  indexSanityCheck?: boolean;
  /** --verify-index-only: check index entries against the log without printing them. */
  verifyIndexOnly?: boolean;
  /** --max-bytes: limit of the .log bytes read. */
  maxBytes?: number;
  parser?: RecordParser;
}

export interface DumpLogSink {
  out(line: string): void;
  err(line: string): void;
}

/** Kafka's default --max-message-size when checking index entries. */
const MAX_MESSAGE_BYTES = 5 * 1024 * 1024;

interface Findings {
  /** Per file, index offset -> log offset (Kafka keeps a TreeMap: sorted, one entry per index offset). */
  indexMismatches: Map<string, Map<number, number>>;
  timeIndexErrors: string[];
  /** Per file, offset -> the offset that follows it (a TreeMap in Kafka too). */
  nonConsecutive: Map<string, Map<number, number>>;
}

/** Dumps every file of `options.files` to `sink`, as kafka-dump-log.sh does. */
export async function dumpLogSegments(fs: FileSystem, options: DumpLogOptions, sink: DumpLogSink): Promise<void> {
  const findings: Findings = { indexMismatches: new Map(), timeIndexErrors: [], nonConsecutive: new Map() };
  for (const file of options.files) {
    sink.out(`Dumping ${file}`);
    const name = posix.basename(file);
    const suffix = name.slice(name.lastIndexOf('.'));
    if (suffix === LOG_FILE_SUFFIX) await dumpLog(fs, file, options, sink, findings);
    else if (suffix === INDEX_FILE_SUFFIX) await dumpIndex(fs, file, options, sink, findings);
    else if (suffix === TIME_INDEX_FILE_SUFFIX) await dumpTimeIndex(fs, file, options, sink, findings);
    else if (suffix === TXN_INDEX_FILE_SUFFIX) await dumpTxnIndex(fs, file, sink);
    else if (suffix === PRODUCER_SNAPSHOT_FILE_SUFFIX) await dumpProducerSnapshot(fs, file, sink);
    else if (name === CLEANER_OFFSET_CHECKPOINT_FILE) await dumpCleanerCheckpoint(fs, file, sink);
    else sink.err(`Ignoring unknown file ${file}`);
  }
  reportFindings(findings, sink);
}

function reportFindings(findings: Findings, sink: DumpLogSink): void {
  for (const [file, mismatches] of findings.indexMismatches) {
    sink.err(`Mismatches in :${file}`);
    for (const [indexOffset, logOffset] of sortedPairs(mismatches)) sink.err(`  Index offset: ${indexOffset}, log offset: ${logOffset}`);
  }
  for (const line of findings.timeIndexErrors) sink.err(line);
  for (const [file, pairs] of findings.nonConsecutive) {
    sink.err(`Non-consecutive offsets in ${file}`);
    for (const [first, second] of sortedPairs(pairs)) sink.err(`  ${first} is followed by ${second}`);
  }
}

// ---- .log ---------------------------------------------------------------------------

async function dumpLog(fs: FileSystem, file: string, options: DumpLogOptions, sink: DumpLogSink, findings: Findings): Promise<void> {
  sink.out(`Log starting offset: ${baseOffsetOf(file)}`);
  const handle = await fs.open(file, 'read');
  try {
    const fileBytes = await handle.size();
    const endPosition = Math.min(fileBytes, options.maxBytes ?? Infinity);
    const scanner = new BatchScanner(handle, { startPosition: 0, endPosition, mode: 'whole' });
    const deep = options.printDataLog === true || options.deepIteration === true;
    // As Kafka: starts at -1 for every file, so a file whose first record is not offset 0 reports a gap too.
    let lastOffset = -1;
    for (let scanned = await scanner.next(); scanned !== null; scanned = await scanner.next()) {
      const batch = scanned.buffer.subarray(scanned.offsetInBuffer, scanned.offsetInBuffer + scanned.header.sizeBytes);
      sink.out(batchLine(batch, scanned.header, scanned.position));
      if (!deep) continue;
      for (const record of decodeRecords(batch, { checkCrc: false }).records ?? []) {
        if (record.offset !== lastOffset + 1) addPair(findings.nonConsecutive, file, [lastOffset, record.offset]);
        lastOffset = record.offset;
        sink.out(recordLine(record, scanned.header, options));
      }
    }
    const trailingBytes = fileBytes - scanner.nextPosition;
    if (trailingBytes > 0 && options.maxBytes === undefined) sink.out(`Found ${trailingBytes} invalid bytes at the end of ${posix.basename(file)}`);
  } finally {
    await handle.close();
  }
}

function batchLine(batch: Buffer, header: BatchHeader, position: number): string {
  const lastSequence = header.baseSequence < 0 ? -1 : incrementSequence(header.baseSequence, header.lastOffsetDelta);
  // Header longs are printed from their bytes: exact even beyond 2^53 (nanosecond clocks).
  const deleteHorizon = header.hasDeleteHorizon ? `OptionalLong[${batch.readBigInt64BE(BATCH_FIELD.baseTimestamp)}]` : 'OptionalLong.empty';
  const isValid = crc32c(batch.subarray(BATCH_FIELD.attributes)) === header.crc;
  return (
    `baseOffset: ${header.baseOffset} lastOffset: ${header.lastOffset} count: ${header.recordCount} ` +
    `baseSequence: ${header.baseSequence} lastSequence: ${lastSequence} producerId: ${batch.readBigInt64BE(BATCH_FIELD.producerId)} ` +
    `producerEpoch: ${header.producerEpoch} partitionLeaderEpoch: ${header.partitionLeaderEpoch} ` +
    `isTransactional: ${header.isTransactional} isControl: ${header.isControl} deleteHorizonMs: ${deleteHorizon} ` +
    `position: ${position} ${timestampTypeName(header)}: ${batch.readBigInt64BE(BATCH_FIELD.maxTimestamp)} size: ${header.sizeBytes} ` +
    `magic: ${header.magic} compresscodec: ${compressionName(header.compression) ?? 'unknown'} crc: ${header.crc} isvalid: ${isValid}`
  );
}

function recordLine(record: Record, header: BatchHeader, options: DumpLogOptions): string {
  const sequence = header.baseSequence < 0 ? -1 : incrementSequence(header.baseSequence, record.offset - header.baseOffset);
  let line =
    `| offset: ${record.offset} ${timestampTypeName(header)}: ${int64Text(record.timestamp)} ` +
    `keySize: ${record.key?.length ?? -1} valueSize: ${record.value?.length ?? -1} ` +
    `sequence: ${sequence} headerKeys: [${record.headers.map((h) => h.key).join(',')}]`;
  if (header.isControl) {
    const control = readControlRecord(record);
    if ('code' in control) return `${line} controlType: invalid (${control.message})`;
    if (control.type === 'COMMIT' || control.type === 'ABORT') {
      return `${line} endTxnMarker: ${control.type} coordinatorEpoch: ${control.coordinatorEpoch}`;
    }
    return `${line} controlType: ${control.type}(${control.typeId})`;
  }
  if (options.printDataLog === true) {
    const { key, payload } = (options.parser ?? stringRecordParser).parse(record);
    if (key !== undefined) line += ` key: ${key}`;
    if (payload !== undefined) line += ` payload: ${payload}`;
  }
  return line;
}

function timestampTypeName(header: BatchHeader): string {
  return header.timestampType === 1 ? 'LogAppendTime' : 'CreateTime';
}

// ---- indexes --------------------------------------------------------------------------

async function dumpIndex(fs: FileSystem, file: string, options: DumpLogOptions, sink: DumpLogSink, findings: Findings): Promise<void> {
  const baseOffset = baseOffsetOf(file);
  const logFile = siblingLog(file);
  const index = new OffsetIndex(fs, file, baseOffset, Infinity);
  if (!(await loadIndex(index, file, sink))) return;
  if (index.entries === 0) return sink.out(`${file} is empty.`);
  const handle = await fs.open(logFile, 'read');
  try {
    const logBytes = await handle.size();
    if (options.indexSanityCheck === true) return sanityResult(file, sink, () => index.sanityCheck(logBytes));
    for (let entry = 0; entry < index.entries; entry++) {
      const { offset, position } = index.entry(entry);
      if (offset === baseOffset && entry > 0) return;
      const batch = await firstBatchAt(handle, position, Math.min(logBytes, position + MAX_MESSAGE_BYTES));
      if (batch === null || batch.lastOffset !== offset) addPair(findings.indexMismatches, file, [offset, batch?.lastOffset ?? -1]);
      if (options.verifyIndexOnly !== true) sink.out(`offset: ${offset} position: ${position}`);
    }
  } finally {
    await handle.close();
  }
}

async function dumpTimeIndex(fs: FileSystem, file: string, options: DumpLogOptions, sink: DumpLogSink, findings: Findings): Promise<void> {
  const baseOffset = baseOffsetOf(file);
  const timeIndex = new TimeIndex(fs, file, baseOffset, Infinity);
  if (!(await loadIndex(timeIndex, file, sink))) return;
  // Unlike the offset index, Kafka prints nothing for an empty time index (only the sanity result when asked).
  const offsetIndex = new OffsetIndex(fs, siblingPath(file, INDEX_FILE_SUFFIX), baseOffset, Infinity);
  await offsetIndex.load().catch(() => offsetIndex.reset());
  const handle = await fs.open(siblingLog(file), 'read');
  try {
    const logBytes = await handle.size();
    if (options.indexSanityCheck === true) return sanityResult(file, sink, () => timeIndex.sanityCheck(Infinity));
    let previousTimestamp = -1;
    for (let entry = 0; entry < timeIndex.entries; entry++) {
      const { timestamp, offset } = timeIndex.entry(entry);
      if (offset === baseOffset && entry > 0) return;
      await checkTimeEntry(handle, { offsetIndex, logBytes, file, timestamp, offset, previousTimestamp }, findings);
      if (options.verifyIndexOnly !== true) sink.out(`timestamp: ${int64Text(timestamp)} offset: ${offset}`);
      previousTimestamp = timestamp;
    }
  } finally {
    await handle.close();
  }
}

/** Kafka's checks of a time-index entry: it names a batch's last offset, whose max record timestamp it holds, in order. */
async function checkTimeEntry(
  handle: Awaited<ReturnType<FileSystem['open']>>,
  entry: { offsetIndex: OffsetIndex; logBytes: number; file: string; timestamp: number; offset: number; previousTimestamp: number },
  findings: Findings,
): Promise<void> {
  const scanner = new BatchScanner(handle, { startPosition: entry.offsetIndex.lookup(entry.offset).position, endPosition: entry.logBytes, mode: 'whole' });
  let found = await scanner.next();
  while (found !== null && found.header.lastOffset < entry.offset) found = await scanner.next();
  if (found === null || found.header.lastOffset !== entry.offset) {
    findings.timeIndexErrors.push(
      `The following indexed offsets are not found in the log.\nIndexed offset: ${entry.offset}, found log offset: ${found?.header.lastOffset ?? -1}`,
    );
    return;
  }
  const batch = found.buffer.subarray(found.offsetInBuffer, found.offsetInBuffer + found.header.sizeBytes);
  const records = decodeRecords(batch, { checkCrc: false }).records ?? [];
  const maxTimestamp = records.reduce((max, record) => Math.max(max, record.timestamp), -1);
  if (maxTimestamp !== entry.timestamp) {
    findings.timeIndexErrors.push(`Found timestamp mismatch in :${entry.file}\n  Index timestamp: ${entry.timestamp}, log timestamp: ${maxTimestamp}`);
  }
  if (entry.previousTimestamp >= entry.timestamp) {
    findings.timeIndexErrors.push(
      `Found out of order timestamp in :${entry.file}\n  Index timestamp: ${entry.timestamp}, Previously indexed timestamp: ${entry.previousTimestamp}`,
    );
  }
}

async function dumpTxnIndex(fs: FileSystem, file: string, sink: DumpLogSink): Promise<void> {
  const index = new TransactionIndex(fs, file, baseOffsetOf(file));
  if (!(await loadIndex(index, file, sink))) return;
  for (let entry = 0; entry < index.entries; entry++) {
    const txn = index.entry(entry);
    sink.out(
      `version: ${index.versionAt(entry)} producerId: ${txn.producerId} firstOffset: ${txn.firstOffset} ` +
        `lastOffset: ${txn.lastOffset} lastStableOffset: ${txn.lastStableOffset}`,
    );
  }
}

async function dumpProducerSnapshot(fs: FileSystem, file: string, sink: DumpLogSink): Promise<void> {
  let entries;
  try {
    entries = decodeProducerSnapshot(await fs.readFile(file));
  } catch (error) {
    sink.err(error instanceof Error ? error.message : String(error));
    return;
  }
  for (const entry of entries) {
    let line =
      `producerId: ${entry.producerId} producerEpoch: ${entry.epoch} coordinatorEpoch: ${entry.coordinatorEpoch} ` +
      `currentTxnFirstOffset: ${entry.currentTxnFirstOffset === -1 ? 'OptionalLong.empty' : `OptionalLong[${entry.currentTxnFirstOffset}]`} ` +
      `lastTimestamp: ${entry.timestampMs}`;
    if (entry.lastOffset >= 0) {
      const firstSequence = decrementSequence(entry.lastSequence, entry.offsetDelta);
      line +=
        ` firstSequence: ${firstSequence} lastSequence: ${entry.lastSequence} lastOffset: ${entry.lastOffset} ` +
        `offsetDelta: ${entry.offsetDelta} timestamp: ${entry.timestampMs}`;
    }
    sink.out(line);
  }
}

// ---- helpers ----------------------------------------------------------------------------

async function loadIndex(index: OffsetIndex | TimeIndex | TransactionIndex, file: string, sink: DumpLogSink): Promise<boolean> {
  try {
    if (await index.load()) return true;
    sink.err(`${file} does not exist`);
  } catch (error) {
    if (!(error instanceof CorruptIndexError)) throw error;
    sink.out(`${file} failed sanity check: ${error.message}`);
  }
  return false;
}

function sanityResult(file: string, sink: DumpLogSink, check: () => void): void {
  try {
    check();
    sink.out(`${file} passed sanity check.`);
  } catch (error) {
    if (!(error instanceof CorruptIndexError)) throw error;
    sink.out(`${file} failed sanity check: ${error.message}`);
  }
}

async function firstBatchAt(
  handle: Awaited<ReturnType<FileSystem['open']>>,
  position: number,
  endPosition: number,
): Promise<BatchHeader | null> {
  return (await new BatchScanner(handle, { startPosition: position, endPosition, mode: 'headers' }).next())?.header ?? null;
}

function addPair(map: Map<string, Map<number, number>>, file: string, [key, value]: [number, number]): void {
  const pairs = map.get(file) ?? new Map<number, number>();
  pairs.set(key, value);
  map.set(file, pairs);
}

function sortedPairs(pairs: ReadonlyMap<number, number>): [number, number][] {
  return [...pairs].sort(([a], [b]) => a - b);
}

function baseOffsetOf(file: string): number {
  const offset = offsetFromFileName(posix.basename(file));
  if (offset !== null) return offset;
  const digits = Number(posix.basename(file).split('.')[0]);
  return Number.isSafeInteger(digits) ? digits : 0;
}

function siblingPath(file: string, suffix: string): string {
  const name = posix.basename(file);
  return posix.join(posix.dirname(file), name.slice(0, name.indexOf('.')) + suffix);
}

function siblingLog(file: string): string {
  return siblingPath(file, LOG_FILE_SUFFIX);
}

// ---- cleaner-offset-checkpoint -----------------------------------------------------------

/**
 * The log cleaner's view of each compacted partition of a log directory:
 * its first dirty offset (where the next pass starts) and the dirty ratio
 * the cleaner computes (LogCleanerManager): clean bytes are the segments
 * below the first dirty offset, dirty bytes the segments from the one
 * holding it up to the active segment (excluded). Offline, the last stable
 * offset and min.compaction.lag.ms are unknown, so the ratio is an upper
 * bound of the one the running cleaner compares with min.cleanable.dirty.ratio.
 */
async function dumpCleanerCheckpoint(fs: FileSystem, file: string, sink: DumpLogSink): Promise<void> {
  let entries: TopicPartitionOffset[];
  try {
    entries = (await readCheckpointFile(fs, file, offsetCheckpointFormat)) ?? [];
  } catch (error) {
    if (!(error instanceof CorruptCheckpointError)) throw error;
    return sink.err(error.message);
  }
  for (const entry of entries) {
    const line = `topic: ${entry.topic} partition: ${entry.partition} firstDirtyOffset: ${entry.offset}`;
    const segments = await segmentSizes(fs, posix.join(posix.dirname(file), partitionDirName(entry)));
    if (segments.length === 0) {
      sink.out(`${line} (no segments in this log directory)`);
      continue;
    }
    let holding = 0;
    for (let index = 0; index < segments.length; index++) if (segments[index]!.baseOffset <= entry.offset) holding = index;
    const cleanBytes = sum(segments.filter((segment) => segment.baseOffset < entry.offset));
    const dirtyBytes = sum(segments.slice(holding, -1));
    const ratio = cleanBytes + dirtyBytes === 0 ? 0 : dirtyBytes / (cleanBytes + dirtyBytes);
    sink.out(`${line} cleanBytes: ${cleanBytes} dirtyBytes: ${dirtyBytes} dirtyRatio: ${ratio.toFixed(3)}`);
  }
}

/** The .log files of a partition directory by base offset (none when the directory is missing). */
async function segmentSizes(fs: FileSystem, dir: string): Promise<{ baseOffset: number; bytes: number }[]> {
  if ((await fs.stat(dir))?.isDirectory !== true) return [];
  const segments: { baseOffset: number; bytes: number }[] = [];
  for (const name of await fs.readdir(dir)) {
    const baseOffset = offsetFromFileName(name);
    if (baseOffset === null || !name.endsWith(LOG_FILE_SUFFIX) || name.length !== 20 + LOG_FILE_SUFFIX.length) continue;
    segments.push({ baseOffset, bytes: (await fs.stat(posix.join(dir, name)))?.size ?? 0 });
  }
  return segments.sort((a, b) => a.baseOffset - b.baseOffset);
}

function sum(segments: readonly { bytes: number }[]): number {
  return segments.reduce((total, segment) => total + segment.bytes, 0);
}
