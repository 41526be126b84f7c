/**
 * Where a group lives: the `__consumer_offsets` partition that stores its
 * records, whose leader is the group's coordinator.
 *
 * Kafka places a key at Utils.abs(key.hashCode()) % partitionCount, with
 * Java's String.hashCode (over UTF-16 code units, 32-bit overflow) and an
 * abs that maps Integer.MIN_VALUE to 0. Clients never compute this, but a
 * cluster mixing Kafka's tools with Spool's data expects the same placement,
 * and so does anyone reading `__consumer_offsets` by hand.
 */

export const CONSUMER_OFFSETS_TOPIC = '__consumer_offsets';
export const TRANSACTION_STATE_TOPIC = '__transaction_state';

/** Java's String.hashCode. */
export function javaStringHashCode(text: string): number {
  let hash = 0;
  for (let i = 0; i < text.length; i++) hash = (Math.imul(hash, 31) + text.charCodeAt(i)) | 0;
  return hash;
}

/** Kafka's Utils.abs: Math.abs, except that Integer.MIN_VALUE maps to 0. */
export function kafkaAbs(value: number): number {
  return value === -2147483648 ? 0 : Math.abs(value);
}

/** The partition of an internal topic with `partitionCount` partitions that holds `key`. */
export function partitionFor(key: string, partitionCount: number): number {
  if (!(partitionCount > 0)) throw new RangeError(`partition count must be positive, got ${partitionCount}`);
  return kafkaAbs(javaStringHashCode(key)) % partitionCount;
}
