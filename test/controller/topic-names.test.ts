/**
 * Proves Spool's topic name rules are Kafka's (Topic.validate and the
 * metric-name collision rule): legal characters, the 249-character limit,
 * '.' and '..', and '.'/'_' collisions, with Kafka's messages.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasCollisionChars, isInternalTopic, topicNameError, unifyTopicName } from '../../src/controller/topic-names.js';

test('legal names pass', () => {
  for (const name of ['a', 'orders', 'Orders.v2', 'my_topic-1', '__consumer_offsets', 'x'.repeat(249)]) {
    assert.equal(topicNameError(name), null, name);
  }
});

test('illegal names get Kafka messages', () => {
  assert.equal(topicNameError(''), "Topic name is illegal, it can't be empty");
  assert.equal(topicNameError('.'), 'Topic name cannot be "." or ".."');
  assert.equal(topicNameError('..'), 'Topic name cannot be "." or ".."');
  const long = 'y'.repeat(250);
  assert.equal(topicNameError(long), `Topic name is illegal, it can't be longer than 249 characters, topic name: ${long}`);
  for (const name of ['a b', 'a/b', 'ä', 'a:b', 'a*']) {
    assert.equal(topicNameError(name), `Topic name "${name}" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'`);
  }
});

test('dots and underscores collide after unification', () => {
  assert.equal(unifyTopicName('a.b_c'), 'a_b_c');
  assert.equal(unifyTopicName('a_b.c'), unifyTopicName('a.b_c'));
  assert.equal(hasCollisionChars('abc'), false);
  assert.equal(hasCollisionChars('a.c'), true);
});

test('internal topics are the coordinators\' topics', () => {
  assert.equal(isInternalTopic('__consumer_offsets'), true);
  assert.equal(isInternalTopic('__transaction_state'), true);
  assert.equal(isInternalTopic('__cluster_metadata'), false);
  assert.equal(isInternalTopic('orders'), false);
});
