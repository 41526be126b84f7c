/**
 * controller_mutation_rate (KIP-599) on the wire, the same scenario against
 * a Spool node and a real Kafka 4.4 node, which must agree on every error
 * code and message and on which requests are throttled:
 * a quota of 1 partition a second (a burst of 11 with the default 11
 * windows of 1 s) set with AlterClientQuotas; then CreateTopics v7 of three
 * 10-partition topics creates two and refuses the third with
 * THROTTLING_QUOTA_EXCEEDED (no message: Kafka leaves out the error's
 * default); a validateOnly CreateTopics v7 is refused too;
 * CreateTopics v5, CreatePartitions v2 and DeleteTopics v4 are accepted and
 * only throttled; CreatePartitions v3 and DeleteTopics v5 are refused.
 * Then request_percentage (KIP-124): with a bound far below any request's
 * time, Metadata and ApiVersions are answered with a throttle time of at
 * most one window (quota.window.size.seconds) on both.
 * Each step uses a new connection: the broker mutes a throttled one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker } from '../../../src/node/embedded.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import type { ApiDef, Partial, RequestOf, ResponseOf } from '../../../src/protocol/schema.js';
import { AlterClientQuotas } from '../../../src/protocol/schemas/49-alter-client-quotas.js';
import { DescribeClientQuotas } from '../../../src/protocol/schemas/48-describe-client-quotas.js';
import { CreateTopics } from '../../../src/protocol/schemas/19-create-topics.js';
import { DeleteTopics } from '../../../src/protocol/schemas/20-delete-topics.js';
import { CreatePartitions } from '../../../src/protocol/schemas/37-create-partitions.js';
import { Metadata } from '../../../src/protocol/schemas/03-metadata.js';
import { ApiVersions } from '../../../src/protocol/schemas/18-api-versions.js';
import { WireClient, call } from '../../server/wire-client.js';
import { kafkaSkipReason, startKafka } from '../kafka/kafka.js';

/** The client id WireClient sends. */
const CLIENT_ID = 'spool-test';
/** The quota the scenario sets: partitions a second. */
const MUTATIONS_PER_SECOND = 1;
/** Tries of DescribeClientQuotas while the quota reaches the node's quota managers. */
const DESCRIBE_TRIES_MAX = 100;

async function once<A extends ApiDef>(bootstrap: string, api: A, version: number, body: Partial<RequestOf<A>>): Promise<ResponseOf<A>> {
  const client = await WireClient.connect(bootstrap);
  try {
    return await call(client, api, version, body);
  } finally {
    client.close();
  }
}

const newTopics = (names: readonly string[], numPartitions: number, validateOnly = false) => ({
  topics: names.map((name) => ({ name, numPartitions, replicationFactor: 1, assignments: [], configs: [] })),
  timeoutMs: 30_000,
  validateOnly,
});
const grow = (name: string, count: number) => ({ topics: [{ name, count, assignments: null }], timeoutMs: 30_000, validateOnly: false });

type Outcome = { errors: string[]; throttled: boolean };
const outcome = (throttleTimeMs: number, results: readonly { name: string | null; errorCode: number; errorMessage?: string | null }[]): Outcome => ({
  errors: results.map((r) => `${r.name}:${r.errorCode}:${r.errorMessage ?? ''}`),
  throttled: throttleTimeMs > 0,
});

/** A request_percentage below what any request takes. */
const REQUEST_PERCENTAGE = 0.0001;

async function setQuota(bootstrap: string, key: string, value: number): Promise<void> {
  const entity = [{ entityType: 'client-id', entityName: CLIENT_ID }];
  const altered = await once(bootstrap, AlterClientQuotas, 1, {
    entries: [{ entity, ops: [{ key, value, remove: false }] }],
    validateOnly: false,
  });
  assert.deepEqual(altered.entries.map((e) => e.errorCode), [ErrorCode.NONE]);
  // Kafka's broker answers once the controller committed the record; its quota managers follow from the metadata log.
  for (let tries = 0; tries < DESCRIBE_TRIES_MAX; tries++) {
    const described = await once(bootstrap, DescribeClientQuotas, 1, { components: [{ entityType: 'client-id', matchType: 0, match: CLIENT_ID }], strict: true });
    if (described.entries?.[0]?.values.some((v) => v.key === key) === true) return;
    await delay(100);
  }
  assert.fail('the quota never showed in DescribeClientQuotas');
}

async function scenario(bootstrap: string): Promise<Outcome[]> {
  await setQuota(bootstrap, 'controller_mutation_rate', MUTATIONS_PER_SECOND);
  const steps: Outcome[] = [];
  const created = await once(bootstrap, CreateTopics, 7, newTopics(['a', 'b', 'c'], 10));
  steps.push(outcome(created.throttleTimeMs, created.topics));
  assert.ok(created.throttleTimeMs <= 9000, `throttle ${created.throttleTimeMs} ms: at most -tokens / quota`);
  const dryRun = await once(bootstrap, CreateTopics, 7, newTopics(['e'], 1, true));
  steps.push(outcome(dryRun.throttleTimeMs, dryRun.topics));
  const permissive = await once(bootstrap, CreateTopics, 5, newTopics(['d'], 1));
  steps.push(outcome(permissive.throttleTimeMs, permissive.topics));
  const strictDelete = await once(bootstrap, DeleteTopics, 5, { topicNames: ['a'], timeoutMs: 30_000 });
  steps.push(outcome(strictDelete.throttleTimeMs, strictDelete.responses));
  const strictGrow = await once(bootstrap, CreatePartitions, 3, grow('b', 12));
  steps.push(outcome(strictGrow.throttleTimeMs, strictGrow.results));
  const permissiveGrow = await once(bootstrap, CreatePartitions, 2, grow('b', 12));
  steps.push(outcome(permissiveGrow.throttleTimeMs, permissiveGrow.results));
  const permissiveDelete = await once(bootstrap, DeleteTopics, 4, { topicNames: ['a'], timeoutMs: 30_000 });
  steps.push(outcome(permissiveDelete.throttleTimeMs, permissiveDelete.responses));
  await setQuota(bootstrap, 'request_percentage', REQUEST_PERCENTAGE);
  const metadata = await once(bootstrap, Metadata, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
  const apiVersions = await once(bootstrap, ApiVersions, 3, { clientSoftwareName: 'spool-test', clientSoftwareVersion: '1' });
  for (const throttleTimeMs of [metadata.throttleTimeMs, apiVersions.throttleTimeMs]) assert.ok(throttleTimeMs <= 1000, `throttle ${throttleTimeMs} ms: at most one window`);
  steps.push(outcome(metadata.throttleTimeMs, []), outcome(apiVersions.throttleTimeMs, []));
  return steps;
}

test('controller_mutation_rate and request_percentage: Spool refuses and throttles as Kafka 4.4 does', { skip: kafkaSkipReason(), timeout: 600_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spool-mutation-quota-'));
  const node = await startBroker({ config: { 'log.dirs': dir } });
  let ours: Outcome[];
  try {
    ours = await scenario(node.bootstrapServers);
  } finally {
    await node.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const refused = `${ErrorCode.THROTTLING_QUOTA_EXCEEDED}:`;
  assert.deepEqual(ours[0], { errors: ['a:0:', 'b:0:', `c:${refused}`], throttled: true });
  assert.deepEqual(ours[2], { errors: ['d:0:'], throttled: true });
  assert.deepEqual(ours.slice(-2), [{ errors: [], throttled: true }, { errors: [], throttled: true }], 'request_percentage throttles Metadata and ApiVersions');
  const kafka = await startKafka();
  try {
    const theirs = await scenario(kafka.bootstrap);
    assert.deepEqual(ours, theirs);
  } finally {
    await kafka.stop();
  }
});
