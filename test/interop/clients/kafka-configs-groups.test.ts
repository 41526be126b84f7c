/**
 * Apache Kafka 4.4.0's kafka-configs.sh (ConfigCommand) on group configs
 * against a real Spool process: `--alter --entity-type groups --add-config
 * share.auto.offset.reset=earliest` succeeds, `--describe` shows it as
 * DYNAMIC_GROUP_CONFIG, `--describe --all` shows the broker-backed
 * share.record.lock.duration.ms from server.properties as
 * STATIC_BROKER_CONFIG, a value outside the broker's bounds is refused with
 * Kafka's message, and `--delete-config` removes the override.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { kafkaLibReady, KAFKA_INTEROP_DIR, runKafkaTool, TOOL } from '../kafka/kafka.js';
import { missingToolSkip } from './scenario.js';
import { startSpool } from './spool-process.js';

process.env.KAFKA_TOOL_OPTS ??= '-Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC';

test('kafka-configs.sh --entity-type groups: alter, describe, refuse out-of-range, delete', { timeout: 180_000 }, async (t) => {
  const skip = missingToolSkip(kafkaLibReady(), `Kafka jars missing: run ${KAFKA_INTEROP_DIR}/setup.sh`);
  if (skip !== undefined) return t.skip(skip);
  const spool = await startSpool({ overrides: ['group.share.record.lock.duration.ms=20000'] });
  t.after(() => spool.stop());
  const group = ['--bootstrap-server', spool.bootstrap, '--entity-type', 'groups', '--entity-name', 'share-g'];
  const configs = async (args: readonly string[]) => runKafkaTool(TOOL.configs, [...group, ...args], { timeoutMs: 60_000 });

  const altered = await configs(['--alter', '--add-config', 'share.auto.offset.reset=earliest']);
  assert.equal(altered.code, 0, altered.stderr);
  assert.match(altered.stdout, /Completed updating config for group share-g\./);

  const described = await configs(['--describe']);
  assert.equal(described.code, 0, described.stderr);
  assert.match(described.stdout, /Dynamic configs for group share-g are:\n {2}share\.auto\.offset\.reset=earliest sensitive=false synonyms=\{DYNAMIC_GROUP_CONFIG:share\.auto\.offset\.reset=earliest\}/);

  const all = await configs(['--describe', '--all']);
  assert.equal(all.code, 0, all.stderr);
  assert.match(all.stdout, /share\.record\.lock\.duration\.ms=20000 sensitive=false synonyms=\{STATIC_BROKER_CONFIG:group\.share\.record\.lock\.duration\.ms=20000, DEFAULT_CONFIG:group\.share\.record\.lock\.duration\.ms=30000\}/);
  assert.match(all.stdout, /share\.isolation\.level=read_uncommitted sensitive=false synonyms=\{\}/);

  const refused = await configs(['--alter', '--add-config', 'share.record.lock.duration.ms=90000']);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stdout + refused.stderr, /share\.record\.lock\.duration\.ms must be in the range 15000 to 60000 inclusive\./);

  const deleted = await configs(['--alter', '--delete-config', 'share.auto.offset.reset']);
  assert.equal(deleted.code, 0, deleted.stderr);
  const after = await configs(['--describe']);
  assert.doesNotMatch(after.stdout, /share\.auto\.offset\.reset/);
});
