/**
 * Reads Kafka primitives from a Buffer view without copying.
 *
 * The reader never throws and never reads past `end`: the first problem
 * (underflow, a length that cannot fit) is
 * recorded in `error`, the cursor jumps to the end, and every later read
 * returns a zero value. Callers check `error` once, after decoding a whole
 * message (STYLE.md §7).
 */
import { int64FromBigInt, readInt64 } from './int64.js';

export class DecodeError extends Error {
  override readonly name = 'DecodeError';
}

export class Reader {
  offset: number;
  readonly end: number;
  error: DecodeError | null = null;
  /**
   * Array elements this reader may still allocate, charged by arrayLength
   * before the elements are read. Unbounded unless the caller sets it (the
   * broker does for requests: REQUEST_ELEMENTS_MAX).
   */
  elementsLeft = Infinity;

  constructor(
    readonly buffer: Buffer,
    start = 0,
    end = buffer.length,
  ) {
    this.offset = start;
    this.end = end;
  }

  get remaining(): number {
    return this.end - this.offset;
  }

  fail(message: string): void {
    if (this.error === null) this.error = new DecodeError(`${message} at byte ${this.offset}`);
    this.offset = this.end;
  }

  /** True when `count` more bytes are available; records an error otherwise. */
  private need(count: number): boolean {
    if (this.end - this.offset >= count) return true;
    this.fail(`need ${count} bytes, have ${this.end - this.offset}`);
    return false;
  }

  int8(): number {
    if (!this.need(1)) return 0;
    return this.buffer.readInt8(this.offset++);
  }

  bool(): boolean {
    return this.int8() !== 0;
  }

  int16(): number {
    if (!this.need(2)) return 0;
    const value = this.buffer.readInt16BE(this.offset);
    this.offset += 2;
    return value;
  }

  uint16(): number {
    if (!this.need(2)) return 0;
    const value = this.buffer.readUInt16BE(this.offset);
    this.offset += 2;
    return value;
  }

  int32(): number {
    if (!this.need(4)) return 0;
    const value = this.buffer.readInt32BE(this.offset);
    this.offset += 4;
    return value;
  }

  uint32(): number {
    if (!this.need(4)) return 0;
    const value = this.buffer.readUInt32BE(this.offset);
    this.offset += 4;
    return value;
  }

  /** int64 as src/protocol/int64.ts carries it (never an error: Kafka accepts every long). */
  int64(): number {
    if (!this.need(8)) return 0;
    const value = readInt64(this.buffer, this.offset);
    this.offset += 8;
    return value;
  }

  float64(): number {
    if (!this.need(8)) return 0;
    const value = this.buffer.readDoubleBE(this.offset);
    this.offset += 8;
    return value;
  }

  /**
   * Unsigned LEB128 varint of at most 5 bytes, as Kafka's ByteUtils reads it:
   * only the low 4 bits of a fifth byte count (the rest are dropped, not
   * refused), and a fifth byte with its continuation bit set is an error.
   */
  uvarint(): number {
    const buffer = this.buffer;
    let offset = this.offset;
    // Fast path: most varints (lengths, deltas, tag counts) are one byte.
    if (offset < this.end && buffer[offset]! < 0x80) {
      this.offset = offset + 1;
      return buffer[offset]!;
    }
    let value = 0;
    for (let i = 0; i < VARINT_BYTES_MAX; i++) {
      if (offset >= this.end) {
        this.fail('truncated varint');
        return 0;
      }
      const byte = buffer[offset++]!;
      const last = i === VARINT_BYTES_MAX - 1;
      value += (byte & (last ? 0x0f : 0x7f)) * SEVEN_BIT_POWERS[i]!;
      if ((byte & 0x80) === 0) {
        this.offset = offset;
        return value;
      }
    }
    this.offset = offset;
    this.fail('varint longer than 5 bytes');
    return 0;
  }

  /** Zigzag-encoded signed varint (32 bits). */
  varint(): number {
    const raw = this.uvarint();
    return raw % 2 === 0 ? raw / 2 : -(raw + 1) / 2;
  }

  /**
   * Zigzag-encoded signed varlong (64 bits), as src/protocol/int64.ts carries
   * it. Up to 7 bytes (49 bits, every offset and timestamp delta in practice)
   * are decoded with exact float arithmetic; longer ones go through BigInt.
   */
  varlong(): number {
    const buffer = this.buffer;
    let offset = this.offset;
    let value = 0;
    for (let i = 0; i < 7; i++) {
      if (offset >= this.end) {
        this.offset = offset;
        this.fail('truncated varlong');
        return 0;
      }
      const byte = buffer[offset++]!;
      value += (byte & 0x7f) * SEVEN_BIT_POWERS[i]!;
      if ((byte & 0x80) === 0) {
        this.offset = offset;
        return value % 2 === 0 ? value / 2 : -(value + 1) / 2;
      }
    }
    return this.longVarlong();
  }

  private longVarlong(): number {
    let value = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (this.offset >= this.end) {
        this.fail('truncated varlong');
        return 0;
      }
      const byte = this.buffer[this.offset++]!;
      value |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) {
        return int64FromBigInt(BigInt.asIntN(64, (value >> 1n) ^ -(value & 1n)));
      }
    }
    this.fail('varlong longer than 64 bits');
    return 0;
  }

  uuid(): string {
    if (!this.need(16)) return ZERO_UUID;
    const text = this.buffer.toString('base64url', this.offset, this.offset + 16);
    this.offset += 16;
    return text;
  }

  /** A view of the next `length` bytes (no copy). */
  view(length: number): Buffer {
    if (length < 0 || !this.need(length)) return EMPTY;
    const out = this.buffer.subarray(this.offset, this.offset + length);
    this.offset += length;
    return out;
  }

  /**
   * A compact length (uvarint length + 1) in Kafka's int arithmetic: the
   * uvarint is a signed 32-bit int there, so one of 2^31 + 1 or more is
   * negative and reads as null, and 2^31 wraps to 2^31 - 1.
   */
  private compactLength(): number {
    return ((this.uvarint() | 0) - 1) | 0;
  }

  /** Length of a classic (int16-prefixed) or compact string; negative for null. */
  stringLength(compact: boolean): number {
    return compact ? this.compactLength() : this.int16();
  }

  /** Length of classic (int32-prefixed) or compact bytes / arrays; negative for null. */
  bytesLength(compact: boolean): number {
    return compact ? this.compactLength() : this.int32();
  }

  string(compact: boolean): string | null {
    const length = this.stringLength(compact);
    if (length < 0) return null;
    if (length > STRING_BYTES_MAX) {
      this.fail(`string length ${length} over ${STRING_BYTES_MAX}`);
      return null;
    }
    if (!this.need(length)) return null;
    const text = this.buffer.toString('utf8', this.offset, this.offset + length);
    this.offset += length;
    return text;
  }

  bytes(compact: boolean): Buffer | null {
    const length = this.bytesLength(compact);
    if (length < 0) return null;
    return this.view(length);
  }

  /**
   * An array element count, or -1 for null (any negative count, as in Kafka).
   * Refused before any element is read, as Kafka 4.4's generated readers
   * refuse it: over COLLECTION_ELEMENTS_MAX, or more elements than the bytes
   * left can hold, so a hostile count cannot make the decoder allocate more
   * than the frame justifies.
   */
  arrayLength(compact: boolean, elementBytesMin: number): number {
    const count = this.bytesLength(compact);
    if (count < 0) return -1;
    if (count * Math.max(1, elementBytesMin) > this.remaining) {
      this.fail(`array of ${count} cannot fit in ${this.remaining} bytes`);
      return 0;
    }
    if (count > COLLECTION_ELEMENTS_MAX) {
      this.fail(`array of ${count} over ${COLLECTION_ELEMENTS_MAX} elements`);
      return 0;
    }
    if (count > this.elementsLeft) {
      this.fail(`array of ${count} over the ${this.elementsLeft} elements left to this message`);
      return 0;
    }
    this.elementsLeft -= count;
    return count;
  }
}

export const EMPTY = Buffer.alloc(0);
/** Kafka's generated readers refuse a string longer than a Java short can count (0x7fff bytes). */
export const STRING_BYTES_MAX = 0x7fff;
/** Kafka 4.4's generated readers refuse a collection of more elements than this. */
export const COLLECTION_ELEMENTS_MAX = 1_000_000;
/**
 * The most array elements one request may decode to, all arrays together.
 * Kafka has no such bound: its per-array limit leaves a 100 MiB request of
 * tiny structs (CreatePartitions with 50 million empty assignments) free to
 * need gigabytes of JVM heap, and an OutOfMemoryError there closes the
 * connection. Node does not survive running out of heap (that request ended
 * the process), so Spool refuses such a request before reading the elements
 * that would cross this bound and closes the connection, Kafka's answer to
 * it. Five million elements (at most about 450 MiB of decoded objects) is
 * above any request a client sends: a reassignment of a million partitions
 * at replication factor 3 is about 4 million.
 */
export const REQUEST_ELEMENTS_MAX = 5_000_000;
/** Kafka 4.4's generated readers refuse more tagged fields than this in one struct. */
export const TAGGED_FIELDS_MAX = 10_000;
/** A Kafka unsigned varint (32 bits) takes at most 5 bytes. */
const VARINT_BYTES_MAX = 5;
/** 2^(7i): the weight of the i-th 7-bit group of a varint. */
const SEVEN_BIT_POWERS = [1, 2 ** 7, 2 ** 14, 2 ** 21, 2 ** 28, 2 ** 35, 2 ** 42];
/** Kafka's Uuid.ZERO_UUID in base64url form. */
export const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';
