/**
 * Proves Spool's partitioner places records where the Java producer does:
 * murmur2 matches org.apache.kafka.common.utils.Utils.murmur2 bit for bit
 * (including keys with bytes >= 0x80 and every tail length), keyed records
 * land on toPositive(murmur2) % partitions, and the sticky partitioner keeps
 * a partition for batch.size bytes, only among partitions with a leader.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { murmur2, partitionForKey, StickyPartitioner, toPositive } from '../../src/client/partitioner.js';
import { SeededRandom } from '../../src/io/random.js';

/**
 * Expected values printed by test/interop/murmur2/Murmur2Vectors.java, which
 * calls Utils.murmur2 and Utils.toPositive from kafka-clients 4.4.0:
 * [label, murmur2, toPositive(murmur2) % 3, toPositive(murmur2) % 7].
 */
const KAFKA_VECTORS: readonly [string, number, number, number][] = [
  ['utf8:', 275646681, 0, 2],
  ['utf8:a', -1563381124, 1, 5],
  ['utf8:ab', 316155434, 2, 0],
  ['utf8:abc', 479470107, 0, 4],
  ['utf8:abcd', -1323649548, 2, 5],
  ['utf8:abcde', 461995741, 1, 4],
  ['utf8:key-0', 29210041, 1, 0],
  ['utf8:key-1', 193331640, 0, 5],
  ['utf8:key-42', -187086521, 0, 3],
  ['utf8:hello world', 1221641059, 1, 2],
  ['utf8:The quick brown fox jumps over the lazy dog', 495243318, 0, 3],
  ['utf8:\u00e9t\u00e9 \u2603', 265277273, 2, 2],
  ['hex:ff80007f', -301591868, 0, 5],
  ['hex:fffefdfcfbfaf9', -166236347, 0, 5],
];

function bytesOf(label: string): Buffer {
  return label.startsWith('hex:') ? Buffer.from(label.slice(4), 'hex') : Buffer.from(label.slice(5), 'utf8');
}

test('murmur2 equals Kafka Utils.murmur2 on known byte strings', () => {
  for (const [label, expected] of KAFKA_VECTORS) {
    assert.equal(murmur2(bytesOf(label)), expected, label);
  }
});

test('keyed partition equals toPositive(murmur2) % partitionCount as Kafka computes it', () => {
  for (const [label, , mod3, mod7] of KAFKA_VECTORS) {
    assert.equal(partitionForKey(bytesOf(label), 3), mod3, `${label} % 3`);
    assert.equal(partitionForKey(bytesOf(label), 7), mod7, `${label} % 7`);
  }
});

test('toPositive clears the sign bit, also for the smallest int32', () => {
  assert.equal(toPositive(-2147483648), 0);
  assert.equal(toPositive(-1), 0x7fffffff);
  assert.equal(toPositive(5), 5);
});

test('sticky partitioner keeps one partition until batch.size bytes went to it with the batch full', () => {
  const sticky = new StickyPartitioner(new SeededRandom(7), 100);
  const topic = { partitionCount: 6, available: [0, 1, 2, 3, 4, 5] };
  const first = sticky.partition(topic);
  sticky.recordAppended(topic, 60, false);
  assert.equal(sticky.partition(topic), first);
  // 120 bytes, but the open batch is not full: no switch yet (below 2 x batch.size).
  sticky.recordAppended(topic, 60, false);
  assert.equal(sticky.partition(topic), first);
  const seen = new Set<number>();
  for (let i = 0; i < 200; i++) {
    sticky.recordAppended(topic, 100, true);
    seen.add(sticky.partition(topic));
  }
  assert.ok(seen.size > 1, 'switches partitions once enough bytes went to one');
});

test('sticky partitioner switches at 2 x batch.size even when the batch is never full', () => {
  const topic = { partitionCount: 1000, available: Array.from({ length: 1000 }, (_, i) => i) };
  const sticky = new StickyPartitioner(new SeededRandom(3), 100);
  const first = sticky.partition(topic);
  sticky.recordAppended(topic, 199, false);
  assert.equal(sticky.partition(topic), first);
  sticky.recordAppended(topic, 1, false);
  assert.notEqual(sticky.partition(topic), first);
});

test('sticky partitioner picks only partitions that have a leader', () => {
  const sticky = new StickyPartitioner(new SeededRandom(11), 10);
  const topic = { partitionCount: 8, available: [2, 5] };
  for (let i = 0; i < 100; i++) {
    assert.ok([2, 5].includes(sticky.partition(topic)));
    sticky.recordAppended(topic, 10, true);
  }
});
