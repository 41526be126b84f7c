/**
 * Proves the error table matches Kafka 4.4's Errors enum: codes run without
 * gaps from -1 to the highest code, names and codes are unique, the set of
 * retriable errors is exactly the set whose Java exception extends
 * RetriableException, and lookups of unknown codes degrade as Kafka's
 * Errors.forCode does.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode, errorInfo, errorName, isRetriable, type ErrorName } from '../../src/protocol/errors.js';

/** The highest code in org.apache.kafka.common.protocol.Errors of kafka-clients 4.4.0. */
const HIGHEST_CODE_KAFKA_4_4 = 136;

/** Errors whose exception class extends RetriableException in kafka-clients 4.4.0. */
const RETRIABLE_IN_KAFKA: readonly ErrorName[] = [
  'CORRUPT_MESSAGE', 'UNKNOWN_TOPIC_OR_PARTITION', 'LEADER_NOT_AVAILABLE', 'NOT_LEADER_OR_FOLLOWER',
  'REQUEST_TIMED_OUT', 'REPLICA_NOT_AVAILABLE', 'NETWORK_EXCEPTION', 'COORDINATOR_LOAD_IN_PROGRESS',
  'COORDINATOR_NOT_AVAILABLE', 'NOT_COORDINATOR', 'NOT_ENOUGH_REPLICAS', 'NOT_ENOUGH_REPLICAS_AFTER_APPEND',
  'NOT_CONTROLLER', 'CONCURRENT_TRANSACTIONS', 'KAFKA_STORAGE_ERROR', 'FETCH_SESSION_ID_NOT_FOUND',
  'INVALID_FETCH_SESSION_EPOCH', 'LISTENER_NOT_FOUND', 'FENCED_LEADER_EPOCH', 'UNKNOWN_LEADER_EPOCH',
  'OFFSET_NOT_AVAILABLE', 'PREFERRED_LEADER_NOT_AVAILABLE', 'ELIGIBLE_LEADERS_NOT_AVAILABLE',
  'ELECTION_NOT_NEEDED', 'UNSTABLE_OFFSET_COMMIT', 'THROTTLING_QUOTA_EXCEEDED', 'UNKNOWN_TOPIC_ID',
  'INCONSISTENT_TOPIC_ID', 'FETCH_SESSION_TOPIC_ID_ERROR', 'SHARE_SESSION_NOT_FOUND',
  'INVALID_SHARE_SESSION_EPOCH', 'SHARE_SESSION_LIMIT_REACHED',
];

const names = Object.keys(ErrorCode) as ErrorName[];

test('codes run from -1 to the highest Kafka 4.4 code without gaps or duplicates', () => {
  const codes = names.map((name) => ErrorCode[name]).sort((a, b) => a - b);
  const expected = Array.from({ length: HIGHEST_CODE_KAFKA_4_4 + 2 }, (_, i) => i - 1);
  assert.deepEqual(codes, expected);
});

test('codes sit at the values Kafka clients expect', () => {
  // Spot checks across the table, read from Kafka's Errors enum.
  assert.equal(ErrorCode.UNKNOWN_SERVER_ERROR, -1);
  assert.equal(ErrorCode.NONE, 0);
  assert.equal(ErrorCode.OFFSET_OUT_OF_RANGE, 1);
  assert.equal(ErrorCode.NOT_LEADER_OR_FOLLOWER, 6);
  assert.equal(ErrorCode.UNSUPPORTED_VERSION, 35);
  assert.equal(ErrorCode.INVALID_REQUEST, 42);
  assert.equal(ErrorCode.UNKNOWN_TOPIC_ID, 100);
  assert.equal(ErrorCode.TRANSACTION_ABORTABLE, 120);
  assert.equal(ErrorCode.CONTROLLER_ID_NOT_REGISTERED, 136);
});

test('errorInfo and errorName agree with ErrorCode for every entry', () => {
  for (const name of names) {
    const info = errorInfo(ErrorCode[name]);
    assert.equal(info.code, ErrorCode[name]);
    assert.equal(info.name, name);
    assert.equal(errorName(ErrorCode[name]), name);
  }
});

test('retriable errors are exactly those whose Kafka exception is a RetriableException', () => {
  const retriable = names.filter((name) => errorInfo(ErrorCode[name]).retriable).sort();
  assert.deepEqual(retriable, [...RETRIABLE_IN_KAFKA].sort());
  assert.equal(isRetriable(ErrorCode.NOT_COORDINATOR), true);
  assert.equal(isRetriable(ErrorCode.REBALANCE_IN_PROGRESS), false);
  assert.equal(isRetriable(ErrorCode.INVALID_PRODUCER_EPOCH), false);
});

test('every error except NONE carries a one-line message', () => {
  assert.equal(errorInfo(ErrorCode.NONE).message, '');
  for (const name of names.filter((n) => n !== 'NONE')) {
    const { message } = errorInfo(ErrorCode[name]);
    assert.ok(message.length > 0, name);
    assert.ok(!message.includes('\n'), name);
  }
});

test('an unknown code reads as UNKNOWN_SERVER_ERROR but keeps its code, like Errors.forCode', () => {
  for (const code of [HIGHEST_CODE_KAFKA_4_4 + 1, 999, -2, 32767]) {
    const info = errorInfo(code);
    assert.equal(info.code, code);
    assert.equal(info.name, 'UNKNOWN_SERVER_ERROR');
    assert.equal(info.retriable, false);
    assert.match(info.message, new RegExp(`${code}`));
    assert.equal(errorName(code), 'UNKNOWN_SERVER_ERROR');
  }
});
