/**
 * Group placement agrees with Kafka: Java's String.hashCode (UTF-16 code
 * units, 32-bit overflow), Utils.abs mapping Integer.MIN_VALUE to 0, then
 * modulo the partition count. Expected values were printed by a JVM
 * (OpenJDK 17) running `s.hashCode()` and Kafka's abs on these strings.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { javaStringHashCode, kafkaAbs, partitionFor } from '../../src/group/placement.js';

const fromJava: readonly [string, number, number][] = [
  ['', 0, 0],
  ['a', 97, 47],
  ['hello', 99162322, 22],
  ['my-group', -1906497762, 12],
  ['polygenelubricants', -2147483648, 0],
  ['console-consumer-12345', 158455506, 6],
  ['grüße-группа', -1227473136, 36],
  ['😀emoji', -1233692477, 27],
  ['test-group', 627841412, 12],
];

test('hash codes and partitions (of 50) match the JVM', () => {
  for (const [key, hash, partition] of fromJava) {
    assert.equal(javaStringHashCode(key), hash, key);
    assert.equal(partitionFor(key, 50), partition, key);
  }
});

test('abs of Integer.MIN_VALUE is 0, as in Kafka', () => {
  assert.equal(kafkaAbs(-2147483648), 0);
  assert.equal(kafkaAbs(-5), 5);
  assert.throws(() => partitionFor('g', 0), RangeError);
});
