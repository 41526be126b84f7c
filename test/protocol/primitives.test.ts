/**
 * Proves the primitive Reader and Writer: every type round-trips at its edge
 * values; varints, varlongs and strings have the exact bytes Kafka's ByteUtils
 * and generated message code produce (expected bytes written out by hand from
 * the zigzag / LEB128 rules); int64s are carried as src/protocol/int64.ts
 * decides (beyond 2^53 the nearest double, Long.MAX_VALUE / MIN_VALUE as
 * +/-Infinity, never an error); and the Reader never
 * throws, never reads past its end, keeps the first error, and refuses a
 * length or array count the remaining bytes cannot justify.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { COLLECTION_ELEMENTS_MAX, Reader, STRING_BYTES_MAX, ZERO_UUID } from '../../src/protocol/reader.js';
import { Writer, uvarintBytes } from '../../src/protocol/writer.js';

function write(fill: (writer: Writer) => void): Buffer {
  const writer = new Writer();
  fill(writer);
  return writer.finish();
}

function hex(text: string): Buffer {
  return Buffer.from(text.replaceAll(' ', ''), 'hex');
}

/** Reads with `read` and checks that the whole input was consumed without error. */
function readAll<T>(bytes: Buffer, read: (reader: Reader) => T): T {
  const reader = new Reader(bytes);
  const value = read(reader);
  assert.equal(reader.error, null, reader.error?.message);
  assert.equal(reader.remaining, 0);
  return value;
}

/** Reads with `read` and checks that it failed, returning the zero value it gave. */
function readFailing<T>(bytes: Buffer, read: (reader: Reader) => T): { value: T; reader: Reader } {
  const reader = new Reader(bytes);
  const value = read(reader);
  assert.notEqual(reader.error, null, `expected an error reading ${bytes.toString('hex')}`);
  assert.equal(reader.offset, reader.end, 'a failed reader jumps to its end');
  return { value, reader };
}

const SAFE = Number.MAX_SAFE_INTEGER;

test('fixed-width integers round-trip at their limits, big-endian', () => {
  const cases: [keyof Writer & keyof Reader, number, number][] = [
    ['int8', -128, 1], ['int8', 127, 1],
    ['int16', -32768, 2], ['int16', 32767, 2],
    ['uint16', 0, 2], ['uint16', 65535, 2],
    ['int32', -(2 ** 31), 4], ['int32', 2 ** 31 - 1, 4],
    ['uint32', 0, 4], ['uint32', 2 ** 32 - 1, 4],
  ];
  for (const [type, value, width] of cases) {
    const bytes = write((w) => (w[type] as (v: number) => void)(value));
    assert.equal(bytes.length, width, `${type} ${value}`);
    assert.equal(readAll(bytes, (r) => (r[type] as () => number)()), value, `${type} ${value}`);
  }
  assert.deepEqual(write((w) => w.int32(0x01020304)), hex('01020304'));
  assert.deepEqual(write((w) => w.int16(-2)), hex('fffe'));
});

test('bool writes 0 / 1 and reads any non-zero byte as true, as Kafka does', () => {
  assert.deepEqual(write((w) => { w.bool(false); w.bool(true); }), hex('00 01'));
  assert.equal(readAll(hex('00'), (r) => r.bool()), false);
  for (const byte of ['01', '02', '7f', 'ff']) assert.equal(readAll(hex(byte), (r) => r.bool()), true, byte);
});

test('int64 round-trips every value up to the safe-integer limits', () => {
  for (const value of [0, 1, -1, 2 ** 31, -(2 ** 31) - 1, 2 ** 32, 2 ** 32 + 1, -(2 ** 32), SAFE, SAFE - 1, -SAFE, -SAFE + 1]) {
    const bytes = write((w) => w.int64(value));
    assert.equal(bytes.length, 8);
    assert.equal(readAll(bytes, (r) => r.int64()), value, `int64 ${value}`);
  }
  assert.deepEqual(write((w) => w.int64(-1)), hex('ffffffffffffffff'));
  assert.deepEqual(write((w) => w.int64(SAFE)), hex('001fffffffffffff'));
  assert.deepEqual(write((w) => w.int64(-SAFE)), hex('ffe0000000000001'));
});

test('int64 maps Long.MAX_VALUE and Long.MIN_VALUE to +/-Infinity, both ways', () => {
  assert.deepEqual(write((w) => w.int64(Infinity)), hex('7fffffffffffffff'));
  assert.deepEqual(write((w) => w.int64(-Infinity)), hex('8000000000000000'));
  assert.equal(readAll(hex('7fffffffffffffff'), (r) => r.int64()), Infinity);
  assert.equal(readAll(hex('8000000000000000'), (r) => r.int64()), -Infinity);
});

test('int64 beyond 2^53 reads as the nearest double and writes back clamped to the int64 range (issue 9: a decode error closed the connection)', () => {
  const rounded: [string, string, number][] = [
    ['2^53', '0020000000000000', 2 ** 53],
    ['2^53 + 1 (ties to even)', '0020000000000001', 2 ** 53],
    ['-2^53', 'ffe0000000000000', -(2 ** 53)],
    ['2^60', '1000000000000000', 2 ** 60],
    ['Long.MAX_VALUE - 1', '7ffffffffffffffe', 2 ** 63],
    ['Long.MIN_VALUE + 1', '8000000000000001', -(2 ** 63)],
  ];
  for (const [label, bytes, value] of rounded) {
    assert.equal(readAll(hex(bytes), (r) => r.int64()), value, label);
  }
  assert.deepEqual(write((w) => w.int64(2 ** 60)), hex('1000000000000000'));
  assert.deepEqual(write((w) => w.int64(2 ** 63)), hex('7fffffffffffffff'));
  assert.deepEqual(write((w) => w.int64(-(2 ** 64))), hex('8000000000000000'));
});

test('float64 round-trips including -0, infinities and NaN', () => {
  for (const value of [0, -0, 1.5, -1e300, Number.MIN_VALUE, Infinity, -Infinity, NaN]) {
    assert.ok(Object.is(readAll(write((w) => w.float64(value)), (r) => r.float64()), value), `${value}`);
  }
});

test('unsigned varints have the bytes Kafka writes and read back', () => {
  // Kafka's writeUnsignedVarint of an int; 2^32-1 is its encoding of -1, 2^31 of Integer.MIN_VALUE.
  const known: [number, string][] = [
    [0, '00'], [1, '01'], [127, '7f'], [128, '8001'], [300, 'ac02'], [16383, 'ff7f'], [16384, '808001'],
    [2 ** 31 - 1, 'ffffffff07'], [2 ** 31, '8080808008'], [2 ** 32 - 1, 'ffffffff0f'],
  ];
  for (const [value, bytes] of known) {
    assert.deepEqual(write((w) => w.uvarint(value)), hex(bytes), `uvarint ${value}`);
    assert.equal(readAll(hex(bytes), (r) => r.uvarint()), value, `uvarint ${bytes}`);
    assert.equal(uvarintBytes(value), bytes.length / 2, `uvarintBytes ${value}`);
  }
});

test('signed varints zigzag like Kafka ByteUtils.writeVarint, extremes included', () => {
  const known: [number, string][] = [
    [0, '00'], [-1, '01'], [1, '02'], [-2, '03'], [5, '0a'], [-5, '09'], [63, '7e'], [-64, '7f'], [64, '8001'], [-65, '8101'],
    [2 ** 31 - 1, 'feffffff0f'], [-(2 ** 31), 'ffffffff0f'],
  ];
  for (const [value, bytes] of known) {
    assert.deepEqual(write((w) => w.varint(value)), hex(bytes), `varint ${value}`);
    assert.equal(readAll(hex(bytes), (r) => r.varint()), value, `varint ${bytes}`);
  }
});

test('varlongs zigzag like Kafka ByteUtils.writeVarlong up to the safe limits', () => {
  const known: [number, string][] = [
    [0, '00'], [-1, '01'], [1, '02'], [2 ** 31 - 1, 'feffffff0f'], [-(2 ** 31), 'ffffffff0f'],
    [2 ** 35, '8080808080 02'], [SAFE, 'feffffffffffff1f'], [-SAFE, 'fdffffffffffff1f'],
  ];
  for (const [value, bytes] of known) {
    assert.deepEqual(write((w) => w.varlong(value)), hex(bytes), `varlong ${value}`);
    assert.equal(readAll(hex(bytes), (r) => r.varlong()), value, `varlong ${bytes}`);
  }
});

test('varlongs beyond 2^53 read as the nearest double; Long.MAX_VALUE and MIN_VALUE as +/-Infinity, both ways', () => {
  const known: [string, string, number][] = [
    ['-2^53', 'ffffffffffffff1f', -(2 ** 53)],
    ['2^53', '80808080808080 20', 2 ** 53],
    ['Long.MAX_VALUE', 'feffffffffffffffff01', Infinity],
    ['Long.MIN_VALUE', 'ffffffffffffffffff01', -Infinity],
  ];
  for (const [label, bytes, value] of known) {
    assert.equal(readAll(hex(bytes), (r) => r.varlong()), value, label);
    assert.deepEqual(write((w) => w.varlong(value)), hex(bytes), label);
  }
});

test('over-long and truncated varints are errors', () => {
  assert.match(readFailing(hex('ffffffffff01'), (r) => r.uvarint()).reader.error!.message, /longer than 5 bytes/);
  assert.match(readFailing(hex('ffff'), (r) => r.uvarint()).reader.error!.message, /truncated varint/);
  assert.match(readFailing(hex(''), (r) => r.varint()).reader.error!.message, /truncated varint/);
  assert.match(readFailing(hex('ffffffffffffffffffff01'), (r) => r.varlong()).reader.error!.message, /longer than 64 bits/);
  assert.match(readFailing(hex('8080'), (r) => r.varlong()).reader.error!.message, /truncated varlong/);
  // A non-minimal encoding is accepted, as Kafka accepts it.
  assert.equal(readAll(hex('8000'), (r) => r.uvarint()), 0);
});

test('a fifth varint byte counts only its low 4 bits, as in Kafka ByteUtils.readUnsignedVarint (was refused)', () => {
  assert.equal(readAll(hex('ffffffff0f'), (r) => r.uvarint()), 0xffff_ffff);
  assert.equal(readAll(hex('ffffffff1f'), (r) => r.uvarint()), 0xffff_ffff);
  assert.equal(readAll(hex('ffffffff7f'), (r) => r.uvarint()), 0xffff_ffff);
  assert.equal(readAll(hex('8080808071'), (r) => r.uvarint()), 0x1000_0000);
  assert.equal(readAll(hex('ffffffff7f'), (r) => r.varint()), -(2 ** 31));
});

test('uuids round-trip as Kafka base64url text; the zero uuid is 16 zero bytes', () => {
  const id = 'AAECAwQFBgcICQoLDA0ODw';
  assert.deepEqual(write((w) => w.uuid(id)), hex('000102030405060708090a0b0c0d0e0f'));
  assert.equal(readAll(hex('000102030405060708090a0b0c0d0e0f'), (r) => r.uuid()), id);
  assert.deepEqual(write((w) => w.uuid(ZERO_UUID)), Buffer.alloc(16));
  assert.equal(readAll(Buffer.alloc(16), (r) => r.uuid()), ZERO_UUID);
  assert.throws(() => write((w) => w.uuid('short')), RangeError);
});

test('classic strings carry an int16 length (-1 for null); compact strings a uvarint length + 1 (0 for null)', () => {
  assert.deepEqual(write((w) => w.string('abc', false)), hex('0003 616263'));
  assert.deepEqual(write((w) => w.string('abc', true)), hex('04 616263'));
  assert.deepEqual(write((w) => w.string('', false)), hex('0000'));
  assert.deepEqual(write((w) => w.string('', true)), hex('01'));
  assert.deepEqual(write((w) => w.string(null, false)), hex('ffff'));
  assert.deepEqual(write((w) => w.string(null, true)), hex('00'));
  for (const compact of [false, true]) {
    for (const value of ['', 'abc', 'grüße', '日本語', 'x'.repeat(200), 'y'.repeat(20_000), null]) {
      const bytes = write((w) => w.string(value, compact));
      assert.equal(readAll(bytes, (r) => r.string(compact)), value, `compact=${compact} ${value?.slice(0, 10)}`);
    }
  }
  // The length counts UTF-8 bytes, not characters: 'grüße' is 7 bytes.
  assert.deepEqual(write((w) => w.string('grüße', true)).subarray(0, 1), hex('08'));
});

test('classic bytes carry an int32 length (-1 for null); compact bytes a uvarint length + 1', () => {
  assert.deepEqual(write((w) => w.bytes(hex('0a0b'), false)), hex('00000002 0a0b'));
  assert.deepEqual(write((w) => w.bytes(hex('0a0b'), true)), hex('03 0a0b'));
  assert.deepEqual(write((w) => w.bytes(null, false)), hex('ffffffff'));
  assert.deepEqual(write((w) => w.bytes(null, true)), hex('00'));
  for (const compact of [false, true]) {
    for (const value of [Buffer.alloc(0), hex('00ff'), Buffer.alloc(5000, 7), null]) {
      const bytes = write((w) => w.bytes(value, compact));
      assert.deepEqual(readAll(bytes, (r) => r.bytes(compact)), value, `compact=${compact} ${value?.length}`);
    }
  }
});

test('array lengths: int32 count or uvarint count + 1, -1 / 0 for null', () => {
  assert.deepEqual(write((w) => w.arrayLength(3, false)), hex('00000003'));
  assert.deepEqual(write((w) => w.arrayLength(3, true)), hex('04'));
  assert.deepEqual(write((w) => w.arrayLength(-1, false)), hex('ffffffff'));
  assert.deepEqual(write((w) => w.arrayLength(-1, true)), hex('00'));
  assert.equal(readAll(hex('00000002 0000'), (r) => { const n = r.arrayLength(false, 1); r.view(2); return n; }), 2);
  assert.equal(readAll(hex('03 0000'), (r) => { const n = r.arrayLength(true, 1); r.view(2); return n; }), 2);
  assert.equal(readAll(hex('ffffffff'), (r) => r.arrayLength(false, 4)), -1);
  assert.equal(readAll(hex('00'), (r) => r.arrayLength(true, 4)), -1);
});

test('an array count the remaining bytes cannot justify is an error and yields 0, so nothing is allocated', () => {
  // 2^31-1 elements claimed in a 12-byte frame: refused before any element is read.
  const classic = readFailing(hex('7fffffff 0000000000000000'), (r) => r.arrayLength(false, 4));
  assert.equal(classic.value, 0);
  assert.match(classic.reader.error!.message, /array of 2147483647 cannot fit in 8 bytes/);
  // Three 4-byte elements need 12 bytes; 8 are left.
  assert.equal(readFailing(hex('04 0000000000000000'), (r) => r.arrayLength(true, 4)).value, 0);
  // Elements of minimum size 0 still count one byte each.
  assert.equal(readFailing(hex('00000003 0000'), (r) => r.arrayLength(false, 0)).value, 0);
  // A compact count of 2^31 - 1 (uvarint 2^31, which Kafka's int arithmetic wraps).
  assert.equal(readFailing(hex('8080808008 00'), (r) => r.arrayLength(true, 1)).value, 0);
});

test('any negative length or count means null, as in Kafka (a compact uvarint of 2^31 + 1 or more is a negative int there)', () => {
  assert.equal(readAll(hex('fffffffe'), (r) => r.arrayLength(false, 1)), -1);
  assert.equal(readAll(hex('80000000'), (r) => r.arrayLength(false, 1)), -1);
  assert.equal(readAll(hex('ffffffff0f'), (r) => r.arrayLength(true, 1)), -1);
  assert.equal(readAll(hex('8180808008'), (r) => r.arrayLength(true, 1)), -1);
  assert.equal(readAll(hex('fffe'), (r) => r.string(false)), null);
  assert.equal(readAll(hex('ffffffff0f'), (r) => r.string(true)), null);
  assert.equal(readAll(hex('fffffffe'), (r) => r.bytes(false)), null);
  assert.equal(readAll(hex('ffffffff0f'), (r) => r.bytes(true)), null);
});

test('an array count over 1,000,000 is refused before any element is read, as Kafka 4.4 refuses it', () => {
  const elements = Buffer.alloc(COLLECTION_ELEMENTS_MAX + 1);
  const atLimit = Buffer.concat([hex('000f4240'), elements]);
  assert.equal(readAll(atLimit, (r) => { const n = r.arrayLength(false, 1); r.view(n + 1); return n; }), COLLECTION_ELEMENTS_MAX);
  const over = Buffer.concat([hex('000f4241'), elements]);
  const refused = readFailing(over, (r) => r.arrayLength(false, 1));
  assert.equal(refused.value, 0);
  assert.match(refused.reader.error!.message, /array of 1000001 over 1000000 elements at byte 4/);
});

test('a compact string longer than 0x7fff bytes is refused, as Kafka refuses it (was accepted)', () => {
  const longest = Buffer.concat([hex('808002'), Buffer.alloc(STRING_BYTES_MAX, 0x61)]);
  assert.equal(readAll(longest, (r) => r.string(true))?.length, STRING_BYTES_MAX);
  const over = Buffer.concat([hex('818002'), Buffer.alloc(STRING_BYTES_MAX + 1, 0x61)]);
  assert.match(readFailing(over, (r) => r.string(true)).reader.error!.message, /string length 32768 over 32767/);
});

test('a string or bytes length longer than the input is an error, not an over-read', () => {
  readFailing(hex('7fff 616263'), (r) => r.string(false));
  readFailing(hex('fe0f 616263'), (r) => r.string(true));
  readFailing(hex('7fffffff 00'), (r) => r.bytes(false));
  readFailing(hex('ffffffff07 00'), (r) => r.bytes(true));
  readFailing(hex('0a 0102'), (r) => r.bytes(true));
  assert.equal(readFailing(hex('0005 6162'), (r) => r.string(false)).value, null);
  assert.deepEqual(readFailing(hex('00000005 6162'), (r) => r.bytes(false)).value, Buffer.alloc(0));
});

test('classic negative lengths read as null, as in Kafka generated code', () => {
  assert.equal(readAll(hex('fffe'), (r) => r.string(false)), null);
  assert.equal(readAll(hex('80000000'), (r) => r.bytes(false)), null);
});

test('truncated fixed-width reads return zero values and never throw', () => {
  const reads: [string, number, (r: Reader) => unknown, unknown][] = [
    ['int8', 1, (r) => r.int8(), 0], ['int16', 2, (r) => r.int16(), 0], ['uint16', 2, (r) => r.uint16(), 0],
    ['int32', 4, (r) => r.int32(), 0], ['uint32', 4, (r) => r.uint32(), 0], ['int64', 8, (r) => r.int64(), 0],
    ['float64', 8, (r) => r.float64(), 0], ['uuid', 16, (r) => r.uuid(), ZERO_UUID], ['bool', 1, (r) => r.bool(), false],
  ];
  for (const [name, width, read, zero] of reads) {
    for (let length = 0; length < width; length++) {
      const { value } = readFailing(Buffer.alloc(length, 0x55), read);
      assert.deepEqual(value, zero, `${name} from ${length} bytes`);
    }
  }
});

test('the first error is kept; later reads return zero values and leave it alone', () => {
  const reader = new Reader(hex('00 01'));
  assert.equal(reader.int32(), 0);
  const first = reader.error;
  assert.match(first!.message, /need 4 bytes, have 2 at byte 0/);
  assert.equal(reader.int8(), 0);
  assert.equal(reader.string(true), null);
  assert.equal(reader.arrayLength(false, 1), 0);
  reader.fail('a later problem');
  assert.equal(reader.error, first);
  assert.equal(reader.offset, reader.end);
});

test('a reader over a window of a larger buffer stops at the window end', () => {
  const backing = hex('ff 00000001 00000002 ff');
  const reader = new Reader(backing, 1, 9);
  assert.equal(reader.int32(), 1);
  assert.equal(reader.int32(), 2);
  assert.equal(reader.remaining, 0);
  assert.equal(reader.int8(), 0);
  assert.notEqual(reader.error, null);
  assert.equal(reader.offset, 9);
  // A length that would reach the byte after the window is refused.
  const lengths = new Reader(hex('00 0002 61 62'), 1, 4);
  assert.equal(lengths.string(false), null);
  assert.notEqual(lengths.error, null);
});

test('view() and bytes() return views into the input, not copies', () => {
  const input = hex('00000003 aabbcc');
  const value = readAll(input, (r) => r.bytes(false))!;
  assert.equal(value.buffer, input.buffer);
  assert.equal(value.byteOffset, input.byteOffset + 4);
});

test('the writer references large byte views instead of copying them, and counts every byte', () => {
  const large = Buffer.alloc(4096, 1);
  const writer = new Writer(64);
  writer.int32(large.length);
  writer.raw(large);
  writer.int16(7);
  assert.equal(writer.length, 4 + 4096 + 2);
  const chunks = writer.finishChunks();
  assert.ok(chunks.includes(large), 'the 4 KiB view is its own chunk');
  const joined = Buffer.concat(chunks);
  assert.equal(joined.length, 4102);
  assert.equal(joined.readInt32BE(0), 4096);
  assert.equal(joined.readInt16BE(4100), 7);
});

test('the writer grows past its working buffer without losing bytes', () => {
  const writer = new Writer(8);
  for (let i = 0; i < 10_000; i++) writer.int32(i);
  writer.string('z'.repeat(30_000), true);
  const bytes = writer.finish();
  const reader = new Reader(bytes);
  for (let i = 0; i < 10_000; i++) assert.equal(reader.int32(), i);
  assert.equal(reader.string(true), 'z'.repeat(30_000));
  assert.equal(reader.error, null);
  assert.equal(reader.remaining, 0);
});
