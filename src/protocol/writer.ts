/**
 * Writes Kafka primitives into a chunk list: small values are packed into a
 * working buffer; large byte views (record batches) become chunks of their
 * own, so they reach the socket or file without being copied.
 */
import { int64ToBigInt, writeInt64 } from './int64.js';
import { ZERO_UUID } from './reader.js';

/** Byte views at least this long are referenced, not copied. */
const ZERO_COPY_BYTES_MIN = 1024;
/** Each working buffer after the first: the chunk that small values are packed into once the first is full. */
const WORKING_BYTES = 16 * 1024;
/**
 * The first working buffer. Most frames (fetches of a few partitions,
 * heartbeats, produce headers around a referenced batch) are far shorter;
 * below Buffer.poolSize / 2 it comes from Node's shared pool instead of a
 * fresh allocation per frame, which showed up in profiles as
 * createUnsafeBuffer and garbage-collector time.
 */
const FIRST_WORKING_BYTES = 1024;

/**
 * The 16 bytes of UUIDs written lately (topic ids, directory ids): the same
 * few are written in every fetch and metadata frame, and base64url decoding
 * each time showed up in profiles. Cleared once it holds UUID_CACHE_ENTRIES_MAX.
 */
const UUID_CACHE_ENTRIES_MAX = 4096;
const uuidBytes = new Map<string, Buffer>();
function rememberUuid(text: string, bytes: Buffer): void {
  if (uuidBytes.size >= UUID_CACHE_ENTRIES_MAX) uuidBytes.clear();
  uuidBytes.set(text, Buffer.from(bytes));
}

export class Writer {
  private readonly chunks: Buffer[] = [];
  private working: Buffer;
  private used = 0;
  private start = 0;
  private totalBytes = 0;

  constructor(initialBytes = FIRST_WORKING_BYTES) {
    this.working = Buffer.allocUnsafe(initialBytes);
  }

  /** Bytes written so far. */
  get length(): number {
    return this.totalBytes + (this.used - this.start);
  }

  private ensure(count: number): void {
    if (this.working.length - this.used >= count) return;
    this.flushWorking();
    this.working = Buffer.allocUnsafe(Math.max(WORKING_BYTES, count));
    this.used = 0;
    this.start = 0;
  }

  private flushWorking(): void {
    if (this.used > this.start) {
      this.chunks.push(this.working.subarray(this.start, this.used));
      this.totalBytes += this.used - this.start;
      this.start = this.used;
    }
  }

  int8(value: number): void {
    this.ensure(1);
    this.working.writeInt8(value, this.used);
    this.used += 1;
  }

  bool(value: boolean): void {
    this.int8(value ? 1 : 0);
  }

  int16(value: number): void {
    this.ensure(2);
    this.working.writeInt16BE(value, this.used);
    this.used += 2;
  }

  uint16(value: number): void {
    this.ensure(2);
    this.working.writeUInt16BE(value, this.used);
    this.used += 2;
  }

  int32(value: number): void {
    this.ensure(4);
    this.working.writeInt32BE(value, this.used);
    this.used += 4;
  }

  uint32(value: number): void {
    this.ensure(4);
    this.working.writeUInt32BE(value, this.used);
    this.used += 4;
  }

  /** int64 as src/protocol/int64.ts carries it. */
  int64(value: number): void {
    this.ensure(8);
    writeInt64(this.working, this.used, value);
    this.used += 8;
  }

  float64(value: number): void {
    this.ensure(8);
    this.working.writeDoubleBE(value, this.used);
    this.used += 8;
  }

  uvarint(value: number): void {
    this.ensure(5);
    let rest = value;
    while (rest >= 0x80) {
      this.working[this.used++] = (rest & 0x7f) | 0x80;
      rest = Math.floor(rest / 128);
    }
    this.working[this.used++] = rest;
  }

  varint(value: number): void {
    this.uvarint(value >= 0 ? value * 2 : -value * 2 - 1);
  }

  varlong(value: number): void {
    this.ensure(10);
    const exact = int64ToBigInt(value);
    let rest = BigInt.asUintN(64, (exact << 1n) ^ (exact >> 63n));
    while (rest >= 0x80n) {
      this.working[this.used++] = Number(rest & 0x7fn) | 0x80;
      rest >>= 7n;
    }
    this.working[this.used++] = Number(rest);
  }

  uuid(value: string): void {
    this.ensure(16);
    const text = value || ZERO_UUID;
    const known = uuidBytes.get(text);
    if (known !== undefined) {
      this.working.set(known, this.used);
      this.used += 16;
      return;
    }
    const written = this.working.write(text, this.used, 16, 'base64url');
    if (written !== 16) throw new RangeError(`invalid uuid ${value}`);
    rememberUuid(text, this.working.subarray(this.used, this.used + 16));
    this.used += 16;
  }

  string(value: string | null, compact: boolean): void {
    if (value === null) {
      if (compact) this.uvarint(0);
      else this.int16(-1);
      return;
    }
    const length = Buffer.byteLength(value, 'utf8');
    if (compact) this.uvarint(length + 1);
    else this.int16(length);
    this.ensure(length);
    this.working.write(value, this.used, length, 'utf8');
    this.used += length;
  }

  bytes(value: Uint8Array | null, compact: boolean): void {
    if (value === null) {
      if (compact) this.uvarint(0);
      else this.int32(-1);
      return;
    }
    if (compact) this.uvarint(value.length + 1);
    else this.int32(value.length);
    this.raw(value);
  }

  arrayLength(count: number, compact: boolean): void {
    if (compact) this.uvarint(count + 1);
    else this.int32(count);
  }

  /** Appends bytes as they are; large ones are referenced, not copied. */
  raw(value: Uint8Array): void {
    if (value.length >= ZERO_COPY_BYTES_MIN) {
      this.flushWorking();
      this.chunks.push(Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.length));
      this.totalBytes += value.length;
      return;
    }
    this.ensure(value.length);
    this.working.set(value, this.used);
    this.used += value.length;
  }

  /** The written bytes as a chunk list (no copy). The writer must not be used afterwards. */
  finishChunks(): Buffer[] {
    this.flushWorking();
    return this.chunks;
  }

  /** The written bytes as one Buffer (copies when there is more than one chunk). */
  finish(): Buffer {
    const chunks = this.finishChunks();
    if (chunks.length === 1) return chunks[0]!;
    return Buffer.concat(chunks, this.totalBytes);
  }
}

/** Byte length of `value` as an unsigned varint. */
export function uvarintBytes(value: number): number {
  let bytes = 1;
  let rest = value;
  while (rest >= 0x80) {
    rest = Math.floor(rest / 128);
    bytes++;
  }
  return bytes;
}
