/**
 * Proves src/protocol/int64.ts, the one way Spool carries Kafka's longs:
 * reads keep order (rounding beyond 2^53 never swaps two values), writes
 * clamp to the int64 range, Long.MAX/MIN_VALUE are ±Infinity both ways, and
 * text parses as Java's Long.parseLong and prints as Long.toString.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { INT64_MAX_TEXT, int64Text, parseInt64, readInt64, writeInt64 } from '../../src/protocol/int64.js';
import { SeededRandom } from '../../src/io/env.js';

function bytesOf(value: bigint): Buffer {
  const buffer = Buffer.alloc(8);
  buffer.writeBigInt64BE(value);
  return buffer;
}

test('readInt64 keeps the order of any two int64s, and is exact within ±(2^53−1)', () => {
  const random = new SeededRandom(9);
  const draw = (): bigint => random.bytes(8).readBigInt64BE();
  for (let i = 0; i < 2000; i++) {
    const [a, b] = [draw(), draw()].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)) as [bigint, bigint];
    assert.ok(readInt64(bytesOf(a), 0) <= readInt64(bytesOf(b), 0), `${a} <= ${b}`);
  }
  for (const value of [0n, -1n, 2n ** 53n - 1n, -(2n ** 53n) + 1n, 1_733_000_000_000n]) {
    assert.equal(readInt64(bytesOf(value), 0), Number(value));
  }
});

test('a nanosecond timestamp reads as the nearest double and writes back within one unit in the last place', () => {
  const nanos = 1_733_000_000_123_456_789n;
  const read = readInt64(bytesOf(nanos), 0);
  assert.equal(read, Number(nanos));
  const out = Buffer.alloc(8);
  writeInt64(out, 0, read);
  const back = out.readBigInt64BE();
  assert.ok(back - nanos <= 128n && nanos - back <= 128n, `${back}`);
});

test('Long.MAX_VALUE and Long.MIN_VALUE are ±Infinity both ways; beyond the range writes clamp', () => {
  assert.equal(readInt64(bytesOf(2n ** 63n - 1n), 0), Infinity);
  assert.equal(readInt64(bytesOf(-(2n ** 63n)), 0), -Infinity);
  const out = Buffer.alloc(8);
  for (const [value, expected] of [
    [Infinity, 2n ** 63n - 1n],
    [2 ** 63, 2n ** 63n - 1n],
    [2 ** 70, 2n ** 63n - 1n],
    [-Infinity, -(2n ** 63n)],
    [-(2 ** 63), -(2n ** 63n)],
    [-(2 ** 70), -(2n ** 63n)],
  ] as const) {
    writeInt64(out, 0, value);
    assert.equal(out.readBigInt64BE(), expected, String(value));
  }
});

test('parseInt64 is Long.parseLong: sign, digits, the int64 range; int64Text is Long.toString', () => {
  assert.equal(parseInt64(INT64_MAX_TEXT), 2n ** 63n - 1n);
  assert.equal(parseInt64('-9223372036854775808'), -(2n ** 63n));
  assert.equal(parseInt64('+42'), 42n);
  assert.equal(parseInt64('007'), 7n);
  assert.equal(parseInt64('9007199254740993'), 9007199254740993n);
  for (const bad of ['9223372036854775808', '-9223372036854775809', '', '1.0', '1e3', ' 1', '0x10', '--1']) {
    assert.equal(parseInt64(bad), null, bad);
  }
  assert.equal(int64Text(Infinity), INT64_MAX_TEXT);
  assert.equal(int64Text(-Infinity), '-9223372036854775808');
  assert.equal(int64Text(-1), '-1');
  assert.equal(int64Text(604_800_000), '604800000');
});
