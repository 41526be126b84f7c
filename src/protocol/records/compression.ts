/**
 * The record batch codecs (attributes bits 0-2): gzip, snappy, lz4, zstd,
 * synchronous, through native packages (DESIGN.md §3.6).
 *
 * Formats, as Kafka's clients write them:
 * - gzip: RFC 1952 members (node:zlib).
 * - snappy: the Java client writes snappy-java's "xerial" stream: a 16-byte
 *   header (0x82 'SNAPPY' 0x00, int32 version 1, int32 compatible version 1)
 *   then blocks of int32 compressed length + raw snappy, each block holding
 *   at most 32 KiB of input. librdkafka may write one raw snappy block. We
 *   read both and write xerial, like Java.
 * - lz4: the standard LZ4 frame (magic 0x184D2204); the v0/v1 broken header
 *   checksum does not apply to batch v2.
 * - zstd: standard zstd frames, usually without a content size (the Java
 *   client streams them), so decompression runs as a bounded stream.
 *
 * Decompression is bounded by `decompressedBytesMax`: a batch that would
 * inflate beyond it is an error value, checked before (snappy, lz4, zstd
 * with a content size) or during (gzip, streamed zstd) inflation, so a
 * "zip bomb" cannot exhaust memory. `openInflater` hands the output over in
 * chunks instead, for readers that stop early (the produce validator): zstd
 * streams through one reused 64 KiB window and snappy goes block by block;
 * gzip and lz4 come as one chunk (node:zlib and lz4-napi inflate only whole
 * buffers synchronously).
 */
import { constants as zlibConstants, gunzipSync, gzipSync } from 'node:zlib';
import { createRequire } from 'node:module';
import { Compression, type BatchError } from './batch.js';

// The native codecs load on first use, not at import: most brokers never see
// some codecs, and loading all three costs tens of milliseconds of startup.
// require() keeps the API synchronous (zstd-napi's low-level binding, the
// streaming DCtx used for bounded decompression, is CommonJS only anyway).
const require = createRequire(import.meta.url);
let zstdModule: typeof import('zstd-napi') | undefined;
let zstdBindingModule: typeof import('zstd-napi/binding.js') | undefined;
let lz4Module: typeof import('lz4-napi') | undefined;
let snappyModule: typeof import('snappy') | undefined;
const zstd = () => (zstdModule ??= require('zstd-napi') as typeof import('zstd-napi'));
const zstdBinding = () => (zstdBindingModule ??= require('zstd-napi/binding.js') as typeof import('zstd-napi/binding.js'));
const lz4 = () => (lz4Module ??= require('lz4-napi') as typeof import('lz4-napi'));
const snappy = () => (snappyModule ??= require('snappy') as typeof import('snappy'));

/** Default ceiling on one batch's decompressed records, in bytes. */
export const DECOMPRESSED_BYTES_MAX = 128 * 1024 * 1024;

export interface CompressOptions {
  /** Codec level (Kafka's compression.<codec>.level, KIP-390); the codec's default when absent. */
  level?: number;
}

export interface DecompressOptions {
  /** Default DECOMPRESSED_BYTES_MAX. */
  decompressedBytesMax?: number;
}

export type CompressionName = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';

const NAMES: readonly CompressionName[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];

/** Kafka's name for a codec id (compression.type values), or null for ids 5-7. */
export function compressionName(compression: number): CompressionName | null {
  return NAMES[compression] ?? null;
}

/** The codec id for a Kafka compression.type name, or null. */
export function compressionId(name: string): number | null {
  const index = NAMES.indexOf(name as CompressionName);
  return index < 0 ? null : index;
}

/** Compresses `data` with the codec `compression` (0-4). An unknown id is a bug and throws. */
export function compress(compression: number, data: Buffer, options: CompressOptions = {}): Buffer {
  switch (compression) {
    case Compression.none:
      return data;
    case Compression.gzip:
      return gzipSync(data, { level: options.level ?? zlibConstants.Z_DEFAULT_COMPRESSION });
    case Compression.snappy:
      return snappyXerialCompress(data);
    case Compression.lz4:
      return lz4().compressFrameSync(data);
    case Compression.zstd:
      return zstd().compress(data, { compressionLevel: options.level ?? ZSTD_LEVEL_DEFAULT });
    default:
      throw new RangeError(`unknown compression type id ${compression}`);
  }
}

/** Kafka's default zstd level (CompressionType.ZSTD default 3). */
const ZSTD_LEVEL_DEFAULT = 3;

/**
 * Decompresses `data` written by codec `compression`. Returns the bytes, or
 * an error value: CORRUPT_MESSAGE for malformed input, MESSAGE_TOO_LARGE when
 * the output would exceed the limit, UNSUPPORTED_COMPRESSION_TYPE for ids 5-7.
 * Never throws.
 */
export function decompress(compression: number, data: Buffer, options: DecompressOptions = {}): Buffer | BatchError {
  const limit = options.decompressedBytesMax ?? DECOMPRESSED_BYTES_MAX;
  try {
    switch (compression) {
      case Compression.none:
        return data.length > limit ? tooLarge(data.length, limit) : data;
      case Compression.gzip:
        return gunzipBounded(data, limit);
      case Compression.lz4:
        return lz4Decompress(data, limit);
      case Compression.snappy:
      case Compression.zstd:
        return collect(openInflater(compression, data, options), limit);
      default:
        return { code: 'UNSUPPORTED_COMPRESSION_TYPE', message: `unknown compression type id ${compression}` };
    }
  } catch (error) {
    return corrupt(`${compressionName(compression)} data is corrupt: ${(error as Error).message}`);
  }
}

/**
 * Inflated bytes in chunks: each call gives the next chunk (valid until the
 * next call), null at a clean end, or an error value (after which the
 * inflater is done). close() releases it early.
 */
export interface Inflater {
  next(): Buffer | null | BatchError;
  close?(): void;
}

/**
 * An inflater over `data` written by codec `compression` (not none), bounded
 * by decompressedBytesMax like decompress. Never throws.
 */
export function openInflater(compression: number, data: Buffer, options: DecompressOptions = {}): Inflater {
  const limit = options.decompressedBytesMax ?? DECOMPRESSED_BYTES_MAX;
  switch (compression) {
    case Compression.snappy:
      return guarded(snappyInflater(data, limit), 'snappy');
    case Compression.zstd:
      return zstdInflater(data, limit);
    default:
      return once(() => decompress(compression, data, options));
  }
}

/** Turns a codec's exception into CORRUPT_MESSAGE. */
function guarded(inflater: Inflater, name: string): Inflater {
  return {
    next() {
      try {
        return inflater.next();
      } catch (error) {
        return corrupt(`${name} data is corrupt: ${(error as Error).message}`);
      }
    },
  };
}

/** An inflater whose one chunk (or error) is `result()`. */
function once(result: () => Buffer | BatchError): Inflater {
  let done = false;
  return { next: () => (done ? null : ((done = true), result())) };
}

/** Every chunk of `inflater`, copied into one buffer of at most `limit` bytes. */
function collect(inflater: Inflater, limit: number): Buffer | BatchError {
  const chunks: Buffer[] = [];
  let totalBytes = 0;
  for (let chunk = inflater.next(); chunk !== null; chunk = inflater.next()) {
    if (!Buffer.isBuffer(chunk)) return chunk.code === 'MESSAGE_TOO_LARGE' ? tooLarge(`more than ${limit}`, limit) : chunk;
    totalBytes += chunk.length;
    if (totalBytes > limit) {
      inflater.close?.();
      return tooLarge(`more than ${limit}`, limit);
    }
    chunks.push(Buffer.from(chunk));
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, totalBytes);
}

/** True when `result` is an error value from decompress. */
export function isCompressionError(result: Buffer | BatchError): result is BatchError {
  return !Buffer.isBuffer(result);
}

function corrupt(message: string): BatchError {
  return { code: 'CORRUPT_MESSAGE', message };
}

function tooLarge(bytes: number | string, limit: number): BatchError {
  return { code: 'MESSAGE_TOO_LARGE', message: `decompressed records (${bytes} bytes) exceed the ${limit}-byte limit` };
}

// ---- gzip

function gunzipBounded(data: Buffer, limit: number): Buffer | BatchError {
  try {
    return gunzipSync(data, { maxOutputLength: Math.max(1, limit) });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return tooLarge(`more than ${limit}`, limit);
    throw error;
  }
}

// ---- snappy

/** 0x82 'SNAPPY' 0x00: snappy-java's stream magic. */
const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
const XERIAL_HEADER_BYTES = 16;
const XERIAL_VERSION = 1;
const XERIAL_COMPATIBLE_VERSION = 1;
/** snappy-java's default block size, which Kafka's SnappyOutputStream uses. */
const XERIAL_BLOCK_BYTES = 32 * 1024;

function snappyXerialCompress(data: Buffer): Buffer {
  const parts: Buffer[] = [xerialHeader()];
  for (let start = 0; start < data.length; start += XERIAL_BLOCK_BYTES) {
    const block = snappy().compressSync(data.subarray(start, start + XERIAL_BLOCK_BYTES));
    const length = Buffer.allocUnsafe(4);
    length.writeInt32BE(block.length, 0);
    parts.push(length, block);
  }
  return Buffer.concat(parts);
}

function xerialHeader(): Buffer {
  const header = Buffer.alloc(XERIAL_HEADER_BYTES);
  XERIAL_MAGIC.copy(header, 0);
  header.writeInt32BE(XERIAL_VERSION, 8);
  header.writeInt32BE(XERIAL_COMPATIBLE_VERSION, 12);
  return header;
}

function isXerial(data: Buffer): boolean {
  return data.length >= XERIAL_MAGIC.length && XERIAL_MAGIC.equals(data.subarray(0, XERIAL_MAGIC.length));
}

/**
 * Inflates a snappy batch block by block: snappy-java's xerial stream, or
 * one raw snappy block (librdkafka may write that).
 */
function snappyInflater(data: Buffer, limit: number): Inflater {
  if (!isXerial(data)) return once(() => snappyRawBlock(data, limit));
  if (data.length < XERIAL_HEADER_BYTES) return once(() => corrupt('snappy stream header is truncated'));
  let position = XERIAL_HEADER_BYTES;
  return {
    next() {
      if (position >= data.length) return null;
      if (data.length - position < 4) return corrupt('snappy block length is truncated');
      const length = data.readInt32BE(position);
      position += 4;
      if (length < 0 || length > data.length - position) return corrupt(`snappy block of ${length} bytes is truncated`);
      const block = data.subarray(position, position + length);
      position += length;
      return snappyRawBlock(block, limit);
    },
  };
}

/**
 * The most a raw snappy block can inflate per byte: a 3-byte copy element
 * writes at most 64 bytes. A larger preamble is a lie, refused before the
 * codec allocates it.
 */
const SNAPPY_EXPANSION_MAX = 22;

/** One raw snappy block; its varint preamble states the output size, checked before inflating. */
function snappyRawBlock(block: Buffer, limit: number): Buffer | BatchError {
  const declared = readUvarint32(block);
  if (declared === null) return corrupt('snappy block has a bad length preamble');
  if (declared > limit) return tooLarge(declared, limit);
  if (declared > block.length * SNAPPY_EXPANSION_MAX) return corrupt(`snappy block of ${block.length} bytes cannot inflate to ${declared}`);
  const out = snappy().uncompressSync(block, { asBuffer: true }) as Buffer;
  if (out.length !== declared) return corrupt(`snappy block inflated to ${out.length} bytes, declared ${declared}`);
  return out;
}

function readUvarint32(data: Buffer): number | null {
  let value = 0;
  for (let index = 0; index < 5 && index < data.length; index++) {
    const byte = data[index]!;
    value += (byte & 0x7f) * 2 ** (7 * index);
    if ((byte & 0x80) === 0) return value <= 0xffff_ffff ? value : null;
  }
  return null;
}

// ---- lz4

const LZ4_FRAME_MAGIC = 0x184d2204;
/** Block maximum sizes by the BD byte's bits 4-6 (4: 64 KiB ... 7: 4 MiB). */
const LZ4_BLOCK_BYTES_MAX: Readonly<Record<number, number>> = { 4: 1 << 16, 5: 1 << 18, 6: 1 << 20, 7: 1 << 22 };

/**
 * The largest block an lz4 frame may declare (BD 7). A frame's bound counts
 * every compressed block at its maximum, while encoders fill all blocks but
 * the last; allowing one block of slack over the limit keeps a legitimate
 * batch just under the limit from being refused, at a bounded cost.
 */
const LZ4_BOUND_SLACK_BYTES = 1 << 22;

/**
 * Bounds the output by walking the frame's block headers (each block inflates
 * to at most the frame's block maximum) before inflating anything, then
 * checks the real size.
 */
function lz4Decompress(data: Buffer, limit: number): Buffer | BatchError {
  const bound = lz4OutputBound(data);
  if (typeof bound === 'string') return corrupt(`lz4 frame is malformed: ${bound}`);
  if (bound.declared !== null && bound.declared > limit) return tooLarge(bound.declared, limit);
  if (bound.bytesMax > limit + LZ4_BOUND_SLACK_BYTES) return tooLarge(`up to ${bound.bytesMax}`, limit);
  const out = lz4().decompressFrameSync(data);
  if (out.length > limit) return tooLarge(out.length, limit);
  return out;
}

interface Lz4Bound {
  /** Sum of the frames' content-size fields, or null when a frame omits it. */
  declared: number | null;
  /** Most bytes the blocks can inflate to. */
  bytesMax: number;
}

/** Walks every frame of `data`; returns the output bound, or what is wrong. */
function lz4OutputBound(data: Buffer): Lz4Bound | string {
  const bound: Lz4Bound = { declared: 0, bytesMax: 0 };
  let position = 0;
  do {
    const next = lz4FrameBound(data, position, bound);
    if (typeof next === 'string') return next;
    position = next;
  } while (position < data.length);
  return bound;
}

function lz4FrameBound(data: Buffer, start: number, bound: Lz4Bound): number | string {
  if (data.length - start < 7) return 'frame header truncated';
  if (data.readUInt32LE(start) !== LZ4_FRAME_MAGIC) return 'bad magic';
  const flags = data[start + 4]!;
  const blockBytesMax = LZ4_BLOCK_BYTES_MAX[(data[start + 5]! >> 4) & 0x07];
  if (flags >> 6 !== 1) return `unsupported frame version ${flags >> 6}`;
  if (blockBytesMax === undefined) return 'bad block maximum size';
  const hasBlockChecksum = (flags & 0x10) !== 0;
  const hasContentSize = (flags & 0x08) !== 0;
  const hasContentChecksum = (flags & 0x04) !== 0;
  const hasDictId = (flags & 0x01) !== 0;
  let position = start + 6 + (hasContentSize ? 8 : 0) + (hasDictId ? 4 : 0) + 1;
  if (position > data.length) return 'frame header truncated';
  if (hasContentSize) {
    const size = Number(data.readBigUInt64LE(start + 6));
    bound.declared = bound.declared === null ? null : bound.declared + size;
  } else {
    bound.declared = null;
  }
  for (;;) {
    if (data.length - position < 4) return 'block size truncated';
    const word = data.readUInt32LE(position);
    position += 4;
    if (word === 0) break;
    const size = word & 0x7fff_ffff;
    const uncompressed = word !== size;
    if (size > blockBytesMax) return `block of ${size} bytes exceeds the frame's ${blockBytesMax}`;
    position += size + (hasBlockChecksum ? 4 : 0);
    if (position > data.length) return 'block truncated';
    bound.bytesMax += uncompressed ? size : blockBytesMax;
  }
  position += hasContentChecksum ? 4 : 0;
  return position > data.length ? 'content checksum truncated' : position;
}

// ---- zstd

/** Output window of the streaming zstd inflater, shared with its context (inflation is synchronous). */
const ZSTD_WINDOW_BYTES = 64 * 1024;
let zstdContext: InstanceType<typeof import('zstd-napi/binding.js').DCtx> | null = null;
let zstdWindow: Buffer | null = null;
let zstdSharedInUse = false;

/**
 * Streams the frames through a 64 KiB window: each chunk is valid until the
 * next call. The context and window are shared by one inflater at a time; a
 * second one open at once (or one never drained) gets its own. A stream
 * that ends mid-frame is corrupt.
 */
function zstdInflater(data: Buffer, limit: number): Inflater {
  let declared: number | null;
  try {
    declared = data.length > 0 ? zstdBinding().getFrameContentSize(data) : 0;
  } catch (error) {
    return once(() => corrupt(`zstd data is corrupt: ${(error as Error).message}`));
  }
  if (declared !== null && declared > limit) return once(() => tooLarge(declared, limit));
  const shared = !zstdSharedInUse;
  const context = shared ? (zstdContext ??= new (zstdBinding().DCtx)()) : new (zstdBinding().DCtx)();
  const window = shared ? (zstdWindow ??= Buffer.allocUnsafe(ZSTD_WINDOW_BYTES)) : Buffer.allocUnsafe(ZSTD_WINDOW_BYTES);
  context.reset(zstdBinding().ResetDirective.sessionOnly);
  if (shared) zstdSharedInUse = true;
  let open = true;
  let rest = data;
  let frameOpen = false;
  let totalBytes = 0;
  const close = <T>(result: T): T => {
    if (open && shared) zstdSharedInUse = false;
    open = false;
    return result;
  };
  return {
    next() {
      if (!open) return null;
      try {
        while (rest.length > 0 || frameOpen) {
          const [hint, produced, consumed] = context.decompressStream(window, rest);
          rest = rest.subarray(consumed);
          frameOpen = hint !== 0;
          totalBytes += produced;
          if (totalBytes > limit) return close(tooLarge(`more than ${limit}`, limit));
          if (produced > 0) return window.subarray(0, produced);
          if (consumed === 0) return close(corrupt('zstd stream is truncated'));
        }
        return close(null);
      } catch (error) {
        return close(corrupt(`zstd data is corrupt: ${(error as Error).message}`));
      }
    },
    close: () => close(undefined),
  };
}
