/**
 * Producer sequence numbers (KIP-98): int32s per producer and partition that
 * wrap from Integer.MAX_VALUE to 0, as Kafka's DefaultRecordBatch
 * incrementSequence / decrementSequence do. The broker's producer state, the
 * client's producer and dump-log all count and compare them here.
 */

/** Integer.MAX_VALUE: the last sequence before the wrap to 0. */
export const SEQUENCE_MAX = 0x7fff_ffff;
const SEQUENCE_SPAN = SEQUENCE_MAX + 1;

export function incrementSequence(sequence: number, increment: number): number {
  return sequence > SEQUENCE_MAX - increment ? increment - (SEQUENCE_MAX - sequence) - 1 : sequence + increment;
}

export function decrementSequence(sequence: number, decrement: number): number {
  return sequence < decrement ? SEQUENCE_MAX - (decrement - sequence) + 1 : sequence - decrement;
}

/** Whether `next` directly follows `last` (Kafka's inSequence). */
export function inSequence(last: number, next: number): boolean {
  return next === incrementSequence(last, 1);
}

/**
 * Whether sequence `a` comes before `b` across the wrap: `b` is less than
 * half the sequence space ahead of `a`. A producer never has that many
 * records unacknowledged (at most five batches in flight per partition).
 */
export function sequenceBefore(a: number, b: number): boolean {
  const ahead = (b - a + SEQUENCE_SPAN) % SEQUENCE_SPAN;
  return ahead !== 0 && ahead < SEQUENCE_SPAN / 2;
}
