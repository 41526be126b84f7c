/**
 * Proves the batch codecs: every codec round-trips data of awkward sizes
 * (empty, one byte, block boundaries, large); snappy is written in
 * snappy-java's xerial framing and both xerial and raw snappy are read; lz4
 * frames with optional checksums, content sizes and any block size are read;
 * concatenated gzip members and zstd frames are read; and decompression
 * past `decompressedBytesMax` or of malformed data is an error value, never
 * an exception or an unbounded allocation.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import { compressFrameSync } from 'lz4-napi';
import { compressSync as snappyRawCompress } from 'snappy';
import {
  compress,
  compressionId,
  compressionName,
  decompress,
  isCompressionError,
} from '../../../src/protocol/records/compression.js';

const CODECS = [0, 1, 2, 3, 4] as const;

function sample(length: number): Buffer {
  const out = Buffer.alloc(length);
  let state = 12345;
  for (let index = 0; index < length; index++) {
    state = (state * 1103515245 + 12345) >>> 0;
    // Half predictable, half noise, so every codec has something to do.
    out[index] = index % 2 === 0 ? index % 64 : state >>> 24;
  }
  return out;
}

function inflate(compression: number, data: Buffer, decompressedBytesMax?: number): Buffer {
  const result = decompress(compression, data, decompressedBytesMax === undefined ? {} : { decompressedBytesMax });
  if (isCompressionError(result)) assert.fail(`codec ${compression}: ${result.code} ${result.message}`);
  return result;
}

function errorCode(compression: number, data: Buffer, decompressedBytesMax?: number): string | null {
  const result = decompress(compression, data, decompressedBytesMax === undefined ? {} : { decompressedBytesMax });
  return isCompressionError(result) ? result.code : null;
}

for (const compression of CODECS) {
  test(`codec ${compression} round-trips empty, tiny, block-boundary and large inputs`, () => {
    for (const length of [0, 1, 100, 32 * 1024, 32 * 1024 + 1, 64 * 1024, 64 * 1024 + 7, 1 << 20]) {
      const data = sample(length);
      assert.deepEqual(inflate(compression, compress(compression, data)), data, `length ${length}`);
    }
  });
}

test('names and ids follow compression.type', () => {
  assert.deepEqual(
    CODECS.map((id) => compressionName(id)),
    ['none', 'gzip', 'snappy', 'lz4', 'zstd'],
  );
  assert.equal(compressionId('zstd'), 4);
  assert.equal(compressionId('brotli'), null);
  assert.equal(compressionName(5), null);
});

test('unknown codec ids: decompress answers UNSUPPORTED_COMPRESSION_TYPE, compress throws', () => {
  for (const id of [5, 6, 7]) {
    assert.equal(errorCode(id, Buffer.from('x')), 'UNSUPPORTED_COMPRESSION_TYPE');
    assert.throws(() => compress(id, Buffer.from('x')), RangeError);
  }
});

test('levels change the output, not the content', () => {
  const data = sample(200_000);
  for (const [compression, low, high] of [
    [1, 1, 9],
    [4, 1, 19],
  ] as const) {
    const fast = compress(compression, data, { level: low });
    const small = compress(compression, data, { level: high });
    assert.notDeepEqual(fast, small, `codec ${compression}`);
    assert.deepEqual(inflate(compression, fast), data);
    assert.deepEqual(inflate(compression, small), data);
  }
});

test("snappy is written as snappy-java's xerial stream with 32 KiB blocks", () => {
  const data = sample(100 * 1024);
  const out = compress(2, data);
  assert.deepEqual(out.subarray(0, 8), Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]));
  assert.equal(out.readInt32BE(8), 1);
  assert.equal(out.readInt32BE(12), 1);
  const blockLengths: number[] = [];
  for (let position = 16; position < out.length; ) {
    const length = out.readInt32BE(position);
    blockLengths.push(length);
    position += 4 + length;
  }
  assert.equal(blockLengths.length, 4);
  assert.equal(16 + blockLengths.reduce((sum, length) => sum + 4 + length, 0), out.length);
});

test('raw (unframed) snappy is read too, as librdkafka may write it', () => {
  const data = sample(50_000);
  assert.deepEqual(inflate(2, snappyRawCompress(data)), data);
});

test('lz4 frames with checksums and any block size are read', () => {
  const data = sample(300_000);
  for (const options of [{ contentChecksum: true }, { blockChecksums: true }, { contentChecksum: true, blockChecksums: true }]) {
    assert.deepEqual(inflate(3, compressFrameSync(data, options)), data, JSON.stringify(options));
  }
});

test('concatenated gzip members and zstd frames are read whole', () => {
  const first = sample(1000);
  const second = sample(3000).subarray(1000);
  const both = Buffer.concat([first, second]);
  assert.deepEqual(inflate(1, Buffer.concat([gzipSync(first), gzipSync(second)])), both);
  assert.deepEqual(inflate(4, Buffer.concat([compress(4, first), compress(4, second)])), both);
});

test('output exactly at the limit is allowed; one byte over is MESSAGE_TOO_LARGE', () => {
  const data = sample(10_000);
  for (const compression of CODECS) {
    const packed = compress(compression, data);
    assert.deepEqual(inflate(compression, packed, 10_000), data, `codec ${compression} at the limit`);
    assert.equal(errorCode(compression, packed, 9_999), 'MESSAGE_TOO_LARGE', `codec ${compression} over`);
  }
});

test('a zip bomb (64 MiB of zeros) is refused under a 1 MiB limit for every codec', () => {
  const zeros = Buffer.alloc(64 << 20);
  for (const compression of [1, 2, 3, 4]) {
    const bomb = compress(compression, zeros);
    assert.ok(bomb.length < zeros.length / 20, `codec ${compression} compresses zeros`);
    assert.equal(errorCode(compression, bomb, 1 << 20), 'MESSAGE_TOO_LARGE', `codec ${compression}`);
  }
});

test('a small lz4 frame with large blocks decodes under a limit below its block size', () => {
  // 4 MiB blocks, as node-lz4 (kafkajs-lz4) writes them: the bound counts a whole block.
  const data = Buffer.alloc(5000, 'lz4 ');
  const frame = Buffer.from(compressFrameSync(data));
  frame[5] = 0x70;
  frame[6] = lz4HeaderChecksum(frame.subarray(4, 6));
  assert.deepEqual(inflate(3, frame, 6000), data);
  assert.equal(errorCode(3, frame, 4999), 'MESSAGE_TOO_LARGE');
});

/** The frame descriptor's checksum: the second byte of xxh32(descriptor, 0). */
function lz4HeaderChecksum(descriptor: Buffer): number {
  return (xxh32(descriptor) >>> 8) & 0xff;
}

function xxh32(input: Buffer): number {
  const PRIME1 = 0x9e3779b1;
  const PRIME2 = 0x85ebca77;
  const PRIME3 = 0xc2b2ae3d;
  const PRIME4 = 0x27d4eb2f;
  const PRIME5 = 0x165667b1;
  const rotl = (value: number, bits: number): number => ((value << bits) | (value >>> (32 - bits))) >>> 0;
  assert.ok(input.length < 16, 'short inputs only');
  let hash = (PRIME5 + input.length) >>> 0;
  let index = 0;
  for (; index + 4 <= input.length; index += 4) {
    hash = (hash + Math.imul(input.readUInt32LE(index), PRIME3)) >>> 0;
    hash = Math.imul(rotl(hash, 17), PRIME4) >>> 0;
  }
  for (; index < input.length; index++) {
    hash = (hash + Math.imul(input[index]!, PRIME5)) >>> 0;
    hash = Math.imul(rotl(hash, 11), PRIME1) >>> 0;
  }
  hash = Math.imul(hash ^ (hash >>> 15), PRIME2) >>> 0;
  hash = Math.imul(hash ^ (hash >>> 13), PRIME3) >>> 0;
  return (hash ^ (hash >>> 16)) >>> 0;
}

test('a zstd frame without a content size is bounded while streaming', () => {
  const data = Buffer.alloc(4 << 20);
  const streamed = streamedZstdFrame(data);
  assert.equal(streamed[4]! & 0xc0, 0, 'the frame omits its content size');
  assert.deepEqual(inflate(4, streamed), data);
  assert.equal(errorCode(4, streamed, 1 << 20), 'MESSAGE_TOO_LARGE');
});

/** A zstd frame written by the streaming API, as the Java client writes them (no content size). */
function streamedZstdFrame(data: Buffer): Buffer {
  // zstd-napi's CompressStream is asynchronous; its binding's CCtx streams synchronously.
  const binding = zstdBinding();
  const context = new binding.CCtx();
  const chunks: Buffer[] = [];
  // Feeding input with `continue` before ending hides the total size, as a stream does.
  let input = data;
  while (input.length > 0) {
    const out = Buffer.alloc(1 << 16);
    const [, produced, consumed] = context.compressStream2(out, input, binding.EndDirective.continue);
    chunks.push(out.subarray(0, produced));
    input = input.subarray(consumed);
  }
  for (;;) {
    const out = Buffer.alloc(1 << 16);
    const [remaining, produced] = context.compressStream2(out, Buffer.alloc(0), binding.EndDirective.end);
    chunks.push(out.subarray(0, produced));
    if (remaining === 0) break;
  }
  return Buffer.concat(chunks);
}

function zstdBinding(): typeof import('zstd-napi/binding.js') {
  return createRequire(import.meta.url)('zstd-napi/binding.js') as typeof import('zstd-napi/binding.js');
}

test('an lz4 frame that declares a huge content size is refused before inflating', () => {
  const frame = Buffer.from(compressFrameSync(sample(1000)));
  // Rebuild the header with the content-size flag and a 2^40-byte size; the check comes before the header checksum.
  const header = Buffer.alloc(15);
  frame.copy(header, 0, 0, 6);
  header[4] = header[4]! | 0x08;
  header.writeBigUInt64LE(2n ** 40n, 6);
  const forged = Buffer.concat([header, frame.subarray(7)]);
  assert.equal(errorCode(3, forged), 'MESSAGE_TOO_LARGE');
});

test('malformed compressed data is CORRUPT_MESSAGE for every codec', () => {
  const data = sample(100_000);
  for (const compression of [1, 2, 3, 4]) {
    const packed = compress(compression, data);
    const truncated = packed.subarray(0, packed.length - 5);
    assert.equal(errorCode(compression, truncated), 'CORRUPT_MESSAGE', `codec ${compression} truncated`);
    assert.equal(errorCode(compression, Buffer.from('not compressed at all')), 'CORRUPT_MESSAGE', `codec ${compression} garbage`);
  }
  const flipped = Buffer.from(compress(1, data));
  flipped[flipped.length - 6]! ^= 0xff;
  assert.equal(errorCode(1, flipped), 'CORRUPT_MESSAGE', 'gzip CRC mismatch');
});

test('malformed snappy and lz4 framing is CORRUPT_MESSAGE', () => {
  const xerial = compress(2, sample(1000));
  const badLength = Buffer.from(xerial);
  badLength.writeInt32BE(1 << 30, 16);
  assert.equal(errorCode(2, badLength), 'CORRUPT_MESSAGE');
  assert.equal(errorCode(2, xerial.subarray(0, 12)), 'CORRUPT_MESSAGE');
  assert.equal(errorCode(2, Buffer.concat([xerial, Buffer.from([0, 0])])), 'CORRUPT_MESSAGE');
  const lz4 = Buffer.from(compressFrameSync(sample(1000)));
  const badVersion = Buffer.from(lz4);
  badVersion[4] = 0x20;
  assert.equal(errorCode(3, badVersion), 'CORRUPT_MESSAGE');
  const bigBlock = Buffer.from(lz4);
  bigBlock.writeUInt32LE(0x7fff_ffff, 7);
  assert.equal(errorCode(3, bigBlock), 'CORRUPT_MESSAGE');
});
