/**
 * Kafka's longs in Spool: the one module that decides how an int64 is carried.
 * Every other file reads, writes, parses and prints int64s through it.
 *
 * - In memory an int64 is a JS `number`. Every value within ±(2^53−1) is
 *   exact, which covers every offset, size, millisecond timestamp and
 *   producer id a broker hands out.
 * - Long.MAX_VALUE and Long.MIN_VALUE, Kafka's "no limit" / "never"
 *   (retention.ms, flush.messages, message.timestamp.before.max.ms, ...),
 *   are +Infinity and -Infinity, so limits compare and test naturally.
 * - Any other value beyond 2^53 (a nanosecond timestamp, an offset of 2^60
 *   in a request) is the nearest double. It is never an error, since Kafka
 *   accepts it. Rounding keeps order (a ≤ b gives round(a) ≤ round(b)), so
 *   every comparison Kafka makes with such a value (offset out of range,
 *   timestamp before/after the allowed window, ListOffsets by timestamp)
 *   gives Kafka's answer, except that values less than one unit in the last
 *   place apart (256 near 2^60) compare equal.
 * - A long that must come back exactly travels as what it came as: record
 *   batches stay bytes (their timestamps are never re-encoded), and config
 *   values stay text (DescribeConfigs shows Long.toString of what was set).
 * - Written out (responses, index entries, snapshots), a value is clamped to
 *   the int64 range, so a rounded 2^63 goes out as Long.MAX_VALUE.
 */

const TWO_POW_32 = 0x1_0000_0000;
const TWO_POW_63 = 2 ** 63;
const INT64_MAX = 0x7fff_ffff_ffff_ffffn;
const INT64_MIN = -0x8000_0000_0000_0000n;
const INT64_TEXT = /^[-+]?\d+$/;

/** Long.MAX_VALUE as Kafka prints it. */
export const INT64_MAX_TEXT = '9223372036854775807';

/** The big-endian int64 at `at`, as described above. */
export function readInt64(buffer: Buffer, at: number): number {
  const high = buffer.readInt32BE(at);
  const low = buffer.readUInt32BE(at + 4);
  if (high === 0x7fff_ffff && low === 0xffff_ffff) return Infinity;
  if (high === -0x8000_0000 && low === 0) return -Infinity;
  return high * TWO_POW_32 + low;
}

/** Writes `value` big-endian at `at`, clamped to the int64 range (±Infinity are Long.MAX/MIN_VALUE). */
export function writeInt64(buffer: Buffer, at: number, value: number): void {
  if (value >= TWO_POW_63 || value < -TWO_POW_63) {
    buffer.writeBigInt64BE(value > 0 ? INT64_MAX : INT64_MIN, at);
    return;
  }
  const high = Math.floor(value / TWO_POW_32);
  buffer.writeInt32BE(high, at);
  buffer.writeUInt32BE(value - high * TWO_POW_32, at + 4);
}

/** An exact int64 (a decoded varlong) as described above. */
export function int64FromBigInt(value: bigint): number {
  if (value === INT64_MAX) return Infinity;
  if (value === INT64_MIN) return -Infinity;
  return Number(value);
}

/** `value` as an exact int64 for encoding (varlong), clamped like writeInt64. */
export function int64ToBigInt(value: number): bigint {
  if (value >= TWO_POW_63) return INT64_MAX;
  if (value < -TWO_POW_63) return INT64_MIN;
  return BigInt(value);
}

/**
 * Kafka's Long.parseLong: an optional sign and decimal digits, within the
 * int64 range. Returns the exact value, or null when Java would refuse it.
 */
export function parseInt64(text: string): bigint | null {
  if (!INT64_TEXT.test(text)) return null;
  const value = BigInt(text);
  return value > INT64_MAX || value < INT64_MIN ? null : value;
}

/** Long.toString: the text Kafka shows for a long held as a number (Infinity is Long.MAX_VALUE). */
export function int64Text(value: number): string {
  return int64ToBigInt(value).toString();
}
