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
 * Bounded: at most RECORDS_LIMIT_MAX records, read RECORDS_READ_BYTES_MAX
 * bytes of log at a time and RECORDS_READS_MAX times per request.
 */
import type { Partition } from '../replication/partition.js';
import { iterateBatches } from '../protocol/records/batch.js';
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
  const shown = bytes.subarray(0, RECORD_FIELD_BYTES_MAX);
  const truncated = shown.length < bytes.length;
  try {
    // A cut may split a character: decode the shown part only, and fall back to base64 if that fails.
    return { encoding: 'utf8', data: utf8.decode(shown), sizeBytes: bytes.length, truncated };
  } catch {
    return { encoding: 'base64', data: shown.toString('base64'), sizeBytes: bytes.length, truncated };
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
  for (let reads = 0; reads < RECORDS_READS_MAX && records.length < limit && nextOffset < positions.logEndOffset; reads++) {
    const read = await partition.log.read(nextOffset, { maxBytes: RECORDS_READ_BYTES_MAX, maxOffset: positions.logEndOffset, minOneMessage: true });
    let progressed = false;
    for (const { position, header } of iterateBatches(read.records)) {
      if (records.length >= limit) break;
      const batch = read.records.subarray(position, position + header.sizeBytes);
      for (const record of browsedRecords(batch, positions)) {
        if (record.offset < nextOffset) continue;
        if (records.length >= limit) break;
        records.push(record);
        nextOffset = record.offset + 1;
      }
      // A batch whose records are all gone (compaction) or skipped still moves the cursor past it.
      if (records.length < limit) nextOffset = Math.max(nextOffset, header.lastOffset + 1);
      progressed = true;
    }
    if (!progressed) break;
  }
  return { records, nextOffset };
}

function browsedRecords(batch: Buffer, positions: Positions) {
  const decoded = decodeRecords(batch, { checkCrc: true });
  const header = iterateBatches(batch).next().value!.header;
  const batchInfo = {
    baseOffset: header.baseOffset,
    lastOffset: header.lastOffset,
    partitionLeaderEpoch: header.partitionLeaderEpoch,
    producerId: header.producerId,
    producerEpoch: header.producerEpoch,
    baseSequence: header.baseSequence,
    isTransactional: header.isTransactional,
    isControl: header.isControl,
    compression: header.compression,
    timestampType: header.timestampType === 1 ? 'LogAppendTime' : 'CreateTime',
    sizeBytes: header.sizeBytes,
    error: decoded.error === null ? null : `${decoded.error.code}: ${decoded.error.message}`,
  };
  return (decoded.records ?? []).map((record) => ({
    offset: record.offset,
    timestamp: record.timestamp,
    key: decodeBytes(record.key),
    value: decodeBytes(record.value),
    headers: record.headers.map((h) => ({ key: h.key, value: decodeBytes(h.value) })),
    aboveHighWatermark: record.offset >= positions.highWatermark,
    aboveLastStableOffset: record.offset >= positions.lastStableOffset,
    batch: batchInfo,
  }));
}
