/**
 * The console's record browser: records of one local replica from an
 * offset, or from the first offset whose timestamp is at or after a given
 * one (ListOffsets' rule, Log.fetchOffsetByTimestamp), decoded for reading.
 *
 * It reads as a follower does, up to the log end offset, so records above
 * the high watermark (not yet visible to consumers) are shown and flagged
 * `aboveHighWatermark`; records of an open transaction sit at or above the
 * last stable offset (`aboveLastStableOffset`). Control batches (commit and
 * abort markers) are listed with isControl, as kafka-dump-log shows them.
 *
 * Keys, values and header values are text when they are valid UTF-8 and
 * base64 otherwise (`encoding` says which), cut at RECORD_FIELD_BYTES_MAX.
 * Bounded: at most RECORDS_LIMIT_MAX records and RECORDS_SHOWN_BYTES_MAX
 * bytes of keys, values and headers per answer (the record that crosses it
 * is the last; nextOffset says where to go on), RECORD_HEADERS_MAX headers
 * per record; the log is read RECORDS_READ_BYTES_MAX bytes at a time, at
 * most RECORDS_READS_MAX times per request.
 */
import type { Partition } from '../replication/partition.js';
import { iterateBatches, type BatchHeader } from '../protocol/records/batch.js';
import { compressionName } from '../protocol/records/compression.js';
import { decodeRecords } from '../protocol/records/records.js';
import { consoleFailure, hostedPartition, isFailure, registrationOf, type ConsoleFailure } from './snapshot.js';
import type { ConsoleSources } from './sources.js';

/** The most records one request returns. */
export const RECORDS_LIMIT_MAX = 200;
/** Records returned when the request names no limit. */
export const RECORDS_LIMIT_DEFAULT = 20;
/** Bytes of log read per step (a larger first batch is still read whole, as a fetch with minOneMessage). */
export const RECORDS_READ_BYTES_MAX = 1024 * 1024;
/** Log reads per request: a long run of skipped or empty batches ends the answer early (nextOffset says where). */
export const RECORDS_READS_MAX = 8;
/** Bytes of a key, value or header value shown; the rest is cut (`truncated`). */
export const RECORD_FIELD_BYTES_MAX = 8 * 1024;
/** Headers shown per record; the rest are counted in `headerCount`. */
export const RECORD_HEADERS_MAX = 64;
/** Bytes of keys, values and headers one answer shows. */
export const RECORDS_SHOWN_BYTES_MAX = 2 * 1024 * 1024;

export interface BrowseRequest {
  /** Start here, or at the first offset at or after `timestamp`. */
  offset?: number;
  timestamp?: number;
  limit: number;
}

export interface DecodedBytes {
  encoding: 'utf8' | 'base64';
  data: string;
  sizeBytes: number;
  truncated: boolean;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Text when the bytes are valid UTF-8, base64 otherwise; at most RECORD_FIELD_BYTES_MAX of them. */
export function decodeBytes(bytes: Buffer | null): DecodedBytes | null {
  if (bytes === null) return null;
  const truncated = bytes.length > RECORD_FIELD_BYTES_MAX;
  // A cut may split a character (up to 3 bytes of it): text ends at the last whole one.
  const cuts = truncated ? [0, 1, 2, 3] : [0];
  for (const back of cuts) {
    const text = utf8Text(bytes.subarray(0, Math.min(bytes.length, RECORD_FIELD_BYTES_MAX) - back));
    if (text !== null) return { encoding: 'utf8', data: text, sizeBytes: bytes.length, truncated };
  }
  return { encoding: 'base64', data: bytes.subarray(0, RECORD_FIELD_BYTES_MAX).toString('base64'), sizeBytes: bytes.length, truncated };
}

function utf8Text(bytes: Buffer): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

export async function browseRecords(sources: ConsoleSources, topicName: string, partitionIndex: number, request: BrowseRequest) {
  const registration = registrationOf(sources, topicName, partitionIndex);
  if (isFailure(registration)) return registration;
  const partition = hostedPartition(sources, topicName, partitionIndex);
  if (partition === null) return consoleFailure(404, 'NOT_LEADER_OR_FOLLOWER', `node ${sources.nodeId} hosts no replica of ${topicName}-${partitionIndex}`);
  const start = await startOffset(partition, request);
  if (isFailure(start)) return start;
  const positions = {
    logStartOffset: partition.logStartOffset,
    lastStableOffset: partition.lastStableOffset(),
    highWatermark: partition.highWatermark,
    logEndOffset: partition.log.logEndOffset,
  };
  const read = start === null ? { records: [], nextOffset: positions.logEndOffset } : await readFrom(partition, start, request.limit, positions);
  return { topic: topicName, partition: partitionIndex, startOffset: start, limit: request.limit, ...positions, ...read };
}

/** The first offset to show; null when no record has a timestamp at or after the one asked. */
async function startOffset(partition: Partition, request: BrowseRequest): Promise<number | null | ConsoleFailure> {
  if (request.timestamp !== undefined) {
    const found = await partition.log.fetchOffsetByTimestamp(request.timestamp);
    return found === null ? null : Math.max(found.offset, partition.logStartOffset);
  }
  const offset = request.offset ?? partition.logStartOffset;
  if (offset < partition.logStartOffset || offset > partition.log.logEndOffset) {
    return consoleFailure(416, 'OFFSET_OUT_OF_RANGE', `offset ${offset} is outside [${partition.logStartOffset}, ${partition.log.logEndOffset}] of ${partition.name}`);
  }
  return offset;
}

type Positions = { lastStableOffset: number; highWatermark: number; logEndOffset: number };

async function readFrom(partition: Partition, start: number, limit: number, positions: Positions) {
  const records: ReturnType<typeof browsedRecords> = [];
  let nextOffset = start;
  let shownBytes = 0;
  const full = () => records.length >= limit || shownBytes >= RECORDS_SHOWN_BYTES_MAX;
  for (let reads = 0; reads < RECORDS_READS_MAX && !full() && nextOffset < positions.logEndOffset; reads++) {
    const read = await partition.log.read(nextOffset, { maxBytes: RECORDS_READ_BYTES_MAX, maxOffset: positions.logEndOffset, minOneMessage: true });
    let progressed = false;
    for (const { position, header } of iterateBatches(read.records)) {
      if (full()) break;
      const batch = read.records.subarray(position, position + header.sizeBytes);
      for (const record of browsedRecords(batch, header, positions)) {
        if (record.offset < nextOffset) continue;
        if (full()) break;
        records.push(record);
        shownBytes += record.shownBytes;
        nextOffset = record.offset + 1;
      }
      // A batch whose records are all gone (compaction) or skipped still moves the cursor past it.
      if (!full()) nextOffset = Math.max(nextOffset, header.lastOffset + 1);
      progressed = true;
    }
    if (!progressed) break;
  }
  return { records, nextOffset };
}

function browsedRecords(batch: Buffer, header: BatchHeader, positions: Positions) {
  const decoded = decodeRecords(batch, { checkCrc: true });
  const batchInfo = {
    baseOffset: header.baseOffset,
    lastOffset: header.lastOffset,
    partitionLeaderEpoch: header.partitionLeaderEpoch,
    producerId: header.producerId,
    producerEpoch: header.producerEpoch,
    baseSequence: header.baseSequence,
    isTransactional: header.isTransactional,
    isControl: header.isControl,
    compression: compressionName(header.compression) ?? String(header.compression),
    timestampType: header.timestampType === 1 ? 'LogAppendTime' : 'CreateTime',
    sizeBytes: header.sizeBytes,
    error: decoded.error === null ? null : `${decoded.error.code}: ${decoded.error.message}`,
  };
  return (decoded.records ?? []).map((record) => {
    const key = decodeBytes(record.key);
    const value = decodeBytes(record.value);
    const headers = record.headers.slice(0, RECORD_HEADERS_MAX).map((h) => ({ key: h.key.slice(0, RECORD_FIELD_BYTES_MAX), value: decodeBytes(h.value) }));
    const shownBytes = (key?.data.length ?? 0) + (value?.data.length ?? 0) + headers.reduce((sum, h) => sum + h.key.length + (h.value?.data.length ?? 0), 0);
    return {
      offset: record.offset,
      timestamp: record.timestamp,
      key,
      value,
      headers,
      headerCount: record.headers.length,
      aboveHighWatermark: record.offset >= positions.highWatermark,
      aboveLastStableOffset: record.offset >= positions.lastStableOffset,
      batch: batchInfo,
      shownBytes,
    };
  });
}
