/**
 * Producer sequence arithmetic (src/protocol/records/sequence.ts): counting
 * wraps from Integer.MAX_VALUE to 0 as Kafka's DefaultRecordBatch does, and
 * order is judged across the wrap.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SEQUENCE_MAX, decrementSequence, inSequence, incrementSequence, sequenceBefore } from '../../src/protocol/records/sequence.js';

test('sequences count and compare across the wrap from Integer.MAX_VALUE to 0', () => {
  assert.equal(SEQUENCE_MAX, 2 ** 31 - 1);
  assert.equal(incrementSequence(SEQUENCE_MAX, 1), 0);
  assert.equal(incrementSequence(SEQUENCE_MAX - 2, 5), 2);
  assert.equal(decrementSequence(2, 5), SEQUENCE_MAX - 2);
  assert.ok(inSequence(SEQUENCE_MAX, 0));
  assert.ok(!inSequence(SEQUENCE_MAX, 1));
  assert.ok(inSequence(41, 42));
  assert.ok(sequenceBefore(SEQUENCE_MAX - 1, 0));
  assert.ok(sequenceBefore(SEQUENCE_MAX, 3));
  assert.ok(!sequenceBefore(0, SEQUENCE_MAX));
  assert.ok(sequenceBefore(5, 6));
  assert.ok(!sequenceBefore(6, 5));
  assert.ok(!sequenceBefore(7, 7));
});
