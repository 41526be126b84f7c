/**
 * Proves FrameAssembler's contract, shared by the broker's connections and
 * the client's: frames come out whole and in order however the stream is
 * chunked, and a size outside the limits is reported as soon as it is read.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FrameAssembler } from '../../src/protocol/framing.js';
import { SeededRandom } from '../../src/io/env.js';

function frame(body: Buffer): Buffer {
  const size = Buffer.alloc(4);
  size.writeInt32BE(body.length);
  return Buffer.concat([size, body]);
}

test('frames split at random points come out whole and in order, seed 7', () => {
  const random = new SeededRandom(7);
  const bodies = Array.from({ length: 50 }, (_, i) => random.bytes(i * 37 % 500));
  const stream = Buffer.concat(bodies.map(frame));
  const assembler = new FrameAssembler({ frameBytesMin: 0, frameBytesMax: 1000 });
  const out: Buffer[] = [];
  for (let offset = 0; offset < stream.length; ) {
    const length = 1 + random.nextInt(300);
    const result = assembler.push(stream.subarray(offset, offset + length));
    assert.ok('frames' in result);
    out.push(...result.frames);
    offset += length;
  }
  assert.deepEqual(out, bodies);
});

test('a size above the maximum is reported once its four bytes have arrived, even split', () => {
  const assembler = new FrameAssembler({ frameBytesMin: 0, frameBytesMax: 10 });
  const header = Buffer.alloc(4);
  header.writeInt32BE(11);
  assert.deepEqual(assembler.push(header.subarray(0, 2)), { frames: [] });
  assert.deepEqual(assembler.push(header.subarray(2)), { invalidSize: 11 });
});

test('a size below the minimum is reported', () => {
  const assembler = new FrameAssembler({ frameBytesMin: 4, frameBytesMax: 10 });
  assert.deepEqual(assembler.push(frame(Buffer.alloc(2))), { invalidSize: 2 });
});
