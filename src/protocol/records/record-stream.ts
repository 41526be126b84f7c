/**
 * The records section of one batch as a forward-only byte stream, read the
 * way Kafka's DefaultRecord reads a record: varints and varlongs with Java's
 * int/long arithmetic, skips over keys and values, and the count of bytes
 * consumed so far (to hold each record to its declared length).
 *
 * Uncompressed records are read in place. Compressed ones are inflated in
 * chunks as the reader advances (compression.ts openInflater), as Kafka's
 * streaming record iterators do: zstd and snappy hold one chunk at a time,
 * so a batch that inflates to far more than its records account for (a "zip
 * bomb") costs no memory and is refused one chunk past its last record;
 * gzip and lz4 are inflated whole, bounded by `decompressedBytesMax`.
 *
 * The stream never throws: the first problem is kept in `error` (with
 * `decompressionFailed` when the codec refused the bytes) and every later
 * read returns end of stream.
 */
import { Compression, type BatchErrorCode } from './batch.js';
import { DECOMPRESSED_BYTES_MAX, openInflater, type Inflater } from './compression.js';

const EMPTY = Buffer.alloc(0);
/** 2^(7i): the weight of a varlong's i-th byte. */
const SEVEN_BIT_POWERS = Array.from({ length: 10 }, (_, index) => 2 ** (7 * index));


/** The fields of one record that its readers check; one object, reused for every record. */
export interface RecordFields {
  timestampDelta: number | bigint;
  offsetDelta: number;
  /** Negative for a null key. */
  keyLength: number;
  /** Negative for a null value. */
  valueLength: number;
}

export function emptyRecordFields(): RecordFields {
  return { timestampDelta: 0, offsetDelta: 0, keyLength: -1, valueLength: -1 };
}

export interface RecordStreamOptions {
  /** Ceiling for codecs inflated whole (gzip, lz4). Default DECOMPRESSED_BYTES_MAX. */
  decompressedBytesMax?: number;
}

export class RecordStream {
  private chunk: Buffer;
  private position = 0;
  /** Bytes consumed before the current chunk. */
  private chunkStart = 0;
  private inflater: Inflater | null;
  /** The first problem met, or null. */
  error: string | null = null;
  /** The codec's error code when the codec refused the bytes (CORRUPT_MESSAGE, MESSAGE_TOO_LARGE), else null. */
  decompressionError: BatchErrorCode | null = null;

  constructor(inflater: Inflater | null, first: Buffer) {
    this.inflater = inflater;
    this.chunk = first;
  }

  /** The records after a batch header: `payload` itself when `compression` is none, else inflated on demand. */
  static open(compression: number, payload: Buffer, options: RecordStreamOptions = {}): RecordStream {
    if (compression === Compression.none) return new RecordStream(null, payload);
    // Streamed codecs hold one chunk at a time, so only whole inflation needs the ceiling.
    const streamed = compression === Compression.zstd || compression === Compression.snappy;
    const decompressedBytesMax = streamed ? Number.MAX_SAFE_INTEGER : (options.decompressedBytesMax ?? DECOMPRESSED_BYTES_MAX);
    return new RecordStream(openInflater(compression, payload, { decompressedBytesMax }), EMPTY);
  }

  /**
   * Reads the next record as DefaultRecord.readFrom does, into `fields`,
   * skipping key, value and headers: false (with `error` set) when its
   * length is negative or above `bodyBytesMax`, a varint is too long, a
   * length or header count runs past the record, a header key length is
   * negative, or its fields do not fill its length exactly. A record that
   * lies within the current chunk (always, uncompressed) is parsed in place.
   */
  readRecord(fields: RecordFields, bodyBytesMax: number): boolean {
    const length = this.varint();
    if (this.error !== null) return false;
    if (length < 0) return this.refuse(`Invalid record size: ${length} is negative.`);
    if (length > bodyBytesMax) return this.refuse(`Invalid record size: ${length} exceeds the configured maximum record size of ${bodyBytesMax}.`);
    if (this.chunk.length - this.position < length) return this.readSplitRecord(length, fields);
    const problem = readBody(this.chunk, this.position, this.position + length, fields);
    if (problem !== null) return this.refuse(problem);
    this.position += length;
    return true;
  }

  private refuse(message: string): false {
    this.fail(message);
    return false;
  }

  /** A record across chunks: the same reads, through the stream. */
  private readSplitRecord(length: number, fields: RecordFields): boolean {
    const start = this.consumed;
    const end = start + length;
    this.byte(); // attributes: unused in v2
    fields.timestampDelta = this.varlong();
    fields.offsetDelta = this.varint();
    fields.keyLength = this.varint();
    this.skipField(fields.keyLength, end);
    fields.valueLength = this.varint();
    this.skipField(fields.valueLength, end);
    this.skipHeaders(end);
    if (this.error !== null) return false;
    if (this.consumed !== end) return this.refuse(`Invalid record size: expected to read ${length} bytes in record payload, but instead read ${this.consumed - start}`);
    return true;
  }

  private skipField(length: number, end: number): void {
    if (this.error !== null || length <= 0) return;
    if (length > end - this.consumed) return this.fail(FIELD_PAST_RECORD);
    this.skip(length);
  }

  private skipHeaders(end: number): void {
    const count = this.varint();
    if (this.error !== null) return;
    const problem = headerCountProblem(count, end - this.consumed);
    if (problem !== null) return this.fail(problem);
    for (let header = 0; header < count && this.error === null; header++) {
      const keyLength = this.varint();
      if (keyLength < 0 && this.error === null) return this.fail(`Invalid negative header key size ${keyLength}`);
      this.skipField(keyLength, end);
      this.skipField(this.varint(), end);
    }
  }

  /** Bytes read (or skipped) so far. */
  get consumed(): number {
    return this.chunkStart + this.position;
  }

  /** Records `message` as the stream's error (the first one wins) and ends the stream. */
  fail(message: string): void {
    if (this.error === null) this.error = message;
    this.inflater?.close?.();
    this.inflater = null;
    this.chunkStart += this.position;
    this.chunk = EMPTY;
    this.position = 0;
  }

  /** Moves to the next non-empty chunk; false at the end of the stream (or after an error). */
  private refill(): boolean {
    while (this.inflater !== null) {
      const next = this.inflater.next();
      if (next === null) {
        this.inflater = null;
        break;
      }
      if (!Buffer.isBuffer(next)) {
        if (this.error === null) this.decompressionError = next.code;
        this.fail(next.message);
        return false;
      }
      this.chunkStart += this.chunk.length;
      this.chunk = next;
      this.position = 0;
      if (next.length > 0) return true;
    }
    return false;
  }

  /** The next byte, or -1 at the end of the stream. */
  byte(): number {
    if (this.position < this.chunk.length || this.refill()) return this.chunk[this.position++]!;
    return -1;
  }

  /** True when no byte is left (pulls the next chunk to know). */
  atEnd(): boolean {
    return this.position >= this.chunk.length && !this.refill();
  }

  /**
   * Zigzag varint as Java's ByteUtils.readVarint: at most 5 bytes, bits past
   * 32 dropped. Past the end of the stream, records an error and returns 0.
   */
  varint(): number {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = this.byte();
      if (byte < 0) return this.endOfStream();
      if ((byte & 0x80) === 0) {
        value |= byte << shift;
        return (value >>> 1) ^ -(value & 1);
      }
      value |= (byte & 0x7f) << shift;
      if (shift >= 28) {
        this.fail('varint longer than 5 bytes');
        return 0;
      }
    }
  }

  /**
   * Zigzag varlong as Java's ByteUtils.readVarlong (at most 10 bytes, bits
   * past 64 dropped): a number when safe, else a bigint (nanosecond clocks).
   */
  varlong(): number | bigint {
    let value = 0;
    for (let index = 0; index < 7; index++) {
      const byte = this.byte();
      if (byte < 0) return this.endOfStream();
      value += (byte & 0x7f) * SEVEN_BIT_POWERS[index]!;
      if ((byte & 0x80) === 0) return value % 2 === 0 ? value / 2 : -(value + 1) / 2;
    }
    return this.wideVarlong(BigInt(value));
  }

  private wideVarlong(low49Bits: bigint): number | bigint {
    let value = low49Bits;
    for (let shift = 49n; shift <= 63n; shift += 7n) {
      const byte = this.byte();
      if (byte < 0) return this.endOfStream();
      value |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) {
        const unsigned = BigInt.asUintN(64, value);
        const signed = BigInt.asIntN(64, (unsigned >> 1n) ^ -(unsigned & 1n));
        return Number.isSafeInteger(Number(signed)) ? Number(signed) : signed;
      }
    }
    this.fail('varlong longer than 10 bytes');
    return 0;
  }

  private endOfStream(): number {
    this.fail('premature end of the records');
    return 0;
  }

  /** Skips `count` bytes; false (with an error) when the stream ends first. */
  skip(count: number): boolean {
    let left = count;
    while (left > 0) {
      const available = this.chunk.length - this.position;
      if (available >= left) {
        this.position += left;
        return true;
      }
      this.position += available;
      left -= available;
      if (!this.refill()) {
        if (this.error === null) this.fail('premature end of the records');
        return false;
      }
    }
    return true;
  }
}

const FIELD_PAST_RECORD = 'Found invalid record structure: a field runs past its record';

function headerCountProblem(count: number, remaining: number): string | null {
  if (count < 0) return `Found invalid number of record headers ${count}`;
  if (count > remaining) return `Found invalid number of record headers. ${count} is larger than the remaining size of the buffer`;
  return null;
}

/** Where readBody's varint readers stop; -1 after a malformed or truncated one. */
let bodyPosition = 0;

/** Zigzag varint from buffer[bodyPosition..end), as Java's readVarint. */
function bodyVarint(buffer: Buffer, end: number): number {
  let value = 0;
  let position = bodyPosition;
  for (let shift = 0; position < end; shift += 7) {
    const byte = buffer[position++]!;
    if ((byte & 0x80) === 0) {
      value |= byte << shift;
      bodyPosition = position;
      return (value >>> 1) ^ -(value & 1);
    }
    value |= (byte & 0x7f) << shift;
    if (shift >= 28) break;
  }
  bodyPosition = -1;
  return 0;
}

/**
 * Zigzag varlong from buffer[bodyPosition..end): up to 4 bytes (every
 * millisecond delta within a batch in practice) in int32 arithmetic, up to
 * 7 in exact float arithmetic, longer through BigInt.
 */
function bodyVarlong(buffer: Buffer, end: number): number | bigint {
  let value = 0;
  let position = bodyPosition;
  for (let shift = 0; shift < 28 && position < end; shift += 7) {
    const byte = buffer[position++]!;
    value |= (byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) {
      bodyPosition = position;
      return (value >>> 1) ^ -(value & 1);
    }
  }
  for (let index = 4; index < 7 && position < end; index++) {
    const byte = buffer[position++]!;
    value += (byte & 0x7f) * SEVEN_BIT_POWERS[index]!;
    if ((byte & 0x80) === 0) {
      bodyPosition = position;
      return value % 2 === 0 ? value / 2 : -(value + 1) / 2;
    }
  }
  if (position >= end) {
    bodyPosition = -1;
    return 0;
  }
  // Rare (nanosecond timestamps): read the rest through a stream over the body.
  const stream = new RecordStream(null, buffer.subarray(bodyPosition, end));
  const wide = stream.varlong();
  bodyPosition = stream.error === null ? bodyPosition + stream.consumed : -1;
  return wide;
}

/** One record body in buffer[start, end): null when well formed, else what is wrong. */
function readBody(buffer: Buffer, start: number, end: number, fields: RecordFields): string | null {
  bodyPosition = start + 1; // attributes: unused in v2
  fields.timestampDelta = bodyVarlong(buffer, end);
  if (bodyPosition < 0) return TRUNCATED_RECORD;
  fields.offsetDelta = bodyVarint(buffer, end);
  if (bodyPosition < 0) return TRUNCATED_RECORD;
  fields.keyLength = bodyVarint(buffer, end);
  if (bodyPosition < 0 || !skipBodyField(fields.keyLength, end)) return TRUNCATED_RECORD;
  fields.valueLength = bodyVarint(buffer, end);
  if (bodyPosition < 0 || !skipBodyField(fields.valueLength, end)) return TRUNCATED_RECORD;
  const count = bodyVarint(buffer, end);
  if (bodyPosition < 0) return TRUNCATED_RECORD;
  const problem = headerCountProblem(count, end - bodyPosition);
  if (problem !== null) return problem;
  for (let header = 0; header < count; header++) {
    const keyLength = bodyVarint(buffer, end);
    if (bodyPosition < 0) return TRUNCATED_RECORD;
    if (keyLength < 0) return `Invalid negative header key size ${keyLength}`;
    if (!skipBodyField(keyLength, end)) return TRUNCATED_RECORD;
    const valueLength = bodyVarint(buffer, end);
    if (bodyPosition < 0 || !skipBodyField(valueLength, end)) return TRUNCATED_RECORD;
  }
  if (bodyPosition !== end) return `Invalid record size: expected to read ${end - start} bytes in record payload, but instead read ${bodyPosition - start}`;
  return null;
}

function skipBodyField(length: number, end: number): boolean {
  if (length <= 0) return true;
  if (length > end - bodyPosition) return false;
  bodyPosition += length;
  return true;
}

const TRUNCATED_RECORD = 'Found invalid record structure: the record ends inside a field, or a varint is too long';
