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

  private constructor(inflater: Inflater | null, first: Buffer) {
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
      value += (byte & 0x7f) * 2 ** (7 * index);
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
