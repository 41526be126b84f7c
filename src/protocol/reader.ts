/**
 * Reads Kafka primitives from a Buffer view without copying.
 *
 * The reader never throws and never reads past `end`: the first problem
 * (underflow, a length that cannot fit, an int64 outside the safe range) is
 * recorded in `error`, the cursor jumps to the end, and every later read
 * returns a zero value. Callers check `error` once, after decoding a whole
 * message (STYLE.md §7).
 */

export class DecodeError extends Error {
  override readonly name = 'DecodeError';
}

const INT64_MAX = 0x7fff_ffff_ffff_ffffn;
const INT64_MIN = -0x8000_0000_0000_0000n;

export class Reader {
  offset: number;
  readonly end: number;
  error: DecodeError | null = null;

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

  /**
   * int64 as a number. Kafka's Long.MAX_VALUE / MIN_VALUE sentinels map to
   * +/-Infinity; any other value outside the safe-integer range is an error.
   */
  int64(): number {
    if (!this.need(8)) return 0;
    const high = this.buffer.readInt32BE(this.offset);
    const low = this.buffer.readUInt32BE(this.offset + 4);
    this.offset += 8;
    const value = high * 0x1_0000_0000 + low;
    if (Number.isSafeInteger(value)) return value;
    const exact = (BigInt(high) << 32n) | BigInt(low);
    if (exact === INT64_MAX) return Infinity;
    if (exact === INT64_MIN) return -Infinity;
    this.fail(`int64 ${exact} outside the safe integer range`);
    return 0;
  }

  float64(): number {
    if (!this.need(8)) return 0;
    const value = this.buffer.readDoubleBE(this.offset);
    this.offset += 8;
    return value;
  }

  /** Unsigned LEB128 varint of at most 5 bytes (32 bits). */
  uvarint(): number {
    const buffer = this.buffer;
    let offset = this.offset;
    // Fast path: most varints (lengths, deltas, tag counts) are one byte.
    if (offset < this.end && buffer[offset]! < 0x80) {
      this.offset = offset + 1;
      return buffer[offset]!;
    }
    let value = 0;
    for (let i = 0; i < 5; i++) {
      if (offset >= this.end) {
        this.fail('truncated varint');
        return 0;
      }
      const byte = buffer[offset++]!;
      value += (byte & 0x7f) * SEVEN_BIT_POWERS[i]!;
      if ((byte & 0x80) === 0) {
        if (value > 0xffff_ffff) break;
        this.offset = offset;
        return value;
      }
    }
    this.offset = offset;
    this.fail('varint longer than 32 bits');
    return 0;
  }

  /** Zigzag-encoded signed varint (32 bits). */
  varint(): number {
    const raw = this.uvarint();
    return raw % 2 === 0 ? raw / 2 : -(raw + 1) / 2;
  }

  /**
   * Zigzag-encoded signed varlong (64 bits), as a safe number. Up to 7 bytes
   * (49 bits, every offset and timestamp delta in practice) are decoded with
   * exact float arithmetic; longer ones go through BigInt.
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
        const signed = (value >> 1n) ^ -(value & 1n);
        const result = Number(signed);
        if (Number.isSafeInteger(result)) return result;
        this.fail(`varlong ${signed} outside the safe integer range`);
        return 0;
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

  /** Length of a classic (int16-prefixed) or compact (uvarint length+1) string; -1 for null. */
  stringLength(compact: boolean): number {
    return compact ? this.uvarint() - 1 : this.int16();
  }

  /** Length of classic (int32-prefixed) or compact bytes / arrays; -1 for null. */
  bytesLength(compact: boolean): number {
    return compact ? this.uvarint() - 1 : this.int32();
  }

  string(compact: boolean): string | null {
    const length = this.stringLength(compact);
    if (length < 0) return null;
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
   * An array element count, checked against the bytes left so that a hostile
   * count cannot make the decoder allocate more than the frame justifies.
   */
  arrayLength(compact: boolean, elementBytesMin: number): number {
    const count = compact ? this.uvarint() - 1 : this.int32();
    if (count < 0) return count === -1 ? -1 : (this.fail(`negative array length ${count}`), 0);
    if (count * Math.max(1, elementBytesMin) > this.remaining) {
      this.fail(`array of ${count} cannot fit in ${this.remaining} bytes`);
      return 0;
    }
    return count;
  }
}

export const EMPTY = Buffer.alloc(0);
/** 2^(7i): the weight of the i-th 7-bit group of a varint. */
const SEVEN_BIT_POWERS = [1, 2 ** 7, 2 ** 14, 2 ** 21, 2 ** 28, 2 ** 35, 2 ** 42];
/** Kafka's Uuid.ZERO_UUID in base64url form. */
export const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';
