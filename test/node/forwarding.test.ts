/**
 * Proves Envelope forwarding (KIP-590) over Kafka's wire against a real
 * Spool node: a broker's forwarding handlers (CreateTopics, DeleteTopics,
 * AlterClientQuotas) wrap the client's request with its principal and address and the active
 * controller serves it, the client getting the controller's response; the
 * controller answers a bad envelope with Kafka's codes
 * (PRINCIPAL_DESERIALIZATION_FAILURE, INVALID_REQUEST for a bad address or
 * a non-forwardable API, UNSUPPORTED_VERSION for an unreadable request).
 * Also: the principal and address encodings are Kafka's; a forwarded
 * CreateTopics counts against the controller_mutation_rate of the client's
 * principal (the Envelope's, not the forwarding broker's), and its throttle
 * time mutes the client's connection on the forwarding broker.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realEnv } from '../../src/io/env.js';
import { encodeRequest } from '../../src/protocol/apis.js';
import { clientAddressBytes, clientAddressText, deserializePrincipal, serializePrincipal } from '../../src/protocol/envelope.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { Metadata } from '../../src/protocol/schemas/03-metadata.js';
import { CreateTopics } from '../../src/protocol/schemas/19-create-topics.js';
import { DeleteTopics } from '../../src/protocol/schemas/20-delete-topics.js';
import { Envelope } from '../../src/protocol/schemas/58-envelope.js';
import { AlterClientQuotas } from '../../src/protocol/schemas/49-alter-client-quotas.js';
import { startBroker } from '../../src/node/embedded.js';
import { forwardingHandler } from '../../src/node/forwarding.js';
import { RpcControllerChannel } from '../../src/node/rpc-controller-channel.js';
import type { RequestContext } from '../../src/server/handler.js';
import { silentLogger } from '../../src/common/logger.js';
import { WireClient, call } from '../server/wire-client.js';

test('principals and client addresses are encoded as Kafka\'s DefaultKafkaPrincipalBuilder and InetAddress do', () => {
  const bytes = serializePrincipal('User:alice');
  // int16 version 0, compact "User", compact "alice", false, no tagged fields.
  assert.deepEqual([...bytes], [0, 0, 5, ...Buffer.from('User'), 6, ...Buffer.from('alice'), 0, 0]);
  assert.equal(deserializePrincipal(bytes), 'User:alice');
  assert.equal(deserializePrincipal(Buffer.from([0, 1, 0])), null);
  assert.deepEqual([...clientAddressBytes('10.1.2.3')], [10, 1, 2, 3]);
  assert.deepEqual([...clientAddressBytes('::ffff:10.1.2.3')], [10, 1, 2, 3]);
  assert.equal(clientAddressText(clientAddressBytes('fe80::1')), 'fe80:0:0:0:0:0:0:1');
  assert.equal(clientAddressText(clientAddressBytes('1:2:3:4:5:6:7:8')), '1:2:3:4:5:6:7:8');
  assert.deepEqual([...clientAddressBytes('::1')], [...Array<number>(15).fill(0), 1]);
  assert.deepEqual([...clientAddressBytes('::ffff:0a01:0203')], [10, 1, 2, 3]);
  for (const bad of ['1.2.3.256', '1.2.3', '1::2::3', '1:2:3:4:5:6:7:8:9', 'g::1', 'in-process']) assert.throws(() => clientAddressBytes(bad), /not an IP address/);
  assert.equal(clientAddressText(Buffer.from([1, 2, 3])), null);
});

function contextFor(apiVersion: number, correlationId: number): RequestContext {
  return {
    header: { requestApiKey: 0, requestApiVersion: apiVersion, correlationId, clientId: 'forwarded-client' },
    apiVersion,
    clientId: 'forwarded-client',
    connectionId: 'c1',
    clientAddress: '10.1.2.3',
    listenerName: 'PLAINTEXT',
    principal: 'User:alice',
    requestBytes: 0,
  };
}

test('admin requests forwarded in an Envelope are served by the active controller; bad envelopes get Kafka\'s codes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spool-forwarding-'));
  const running = await startBroker({ config: { 'log.dirs': dir }, logger: silentLogger });
  const controllerListener = running.broker.listeners.find((l) => l.name === 'CONTROLLER')!;
  const controllerAddress = `${controllerListener.advertisedHost}:${controllerListener.advertisedPort}`;
  const channel = new RpcControllerChannel({ nodeId: 2, env: realEnv, candidates: [{ host: controllerListener.advertisedHost, port: controllerListener.advertisedPort }], requestTimeoutMs: 10_000 });
  const controller = await WireClient.connect(controllerAddress);
  try {
    const createTopics = forwardingHandler(running.broker.handlers.handlerFor('broker', CreateTopics.key)!, channel);
    const created = (await createTopics.handle(
      { topics: [{ name: 'forwarded', numPartitions: 3, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false } as never,
      contextFor(7, 41),
    )) as { topics: { name: string; errorCode: number; numPartitions: number }[] };
    assert.deepEqual(created.topics.map((t) => [t.name, t.errorCode, t.numPartitions]), [['forwarded', ErrorCode.NONE, 3]]);
    assert.equal(running.broker.metadata.image.topicsByName.get('forwarded')!.partitions.size, 3);
    const again = (await createTopics.handle({ topics: [{ name: 'forwarded', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 10_000 } as never, contextFor(7, 42))) as {
      topics: { errorCode: number }[];
    };
    assert.equal(again.topics[0]!.errorCode, ErrorCode.TOPIC_ALREADY_EXISTS);
    const deleteTopics = forwardingHandler(running.broker.handlers.handlerFor('broker', DeleteTopics.key)!, channel);
    const deleted = (await deleteTopics.handle({ topicNames: ['forwarded'], timeoutMs: 10_000 } as never, contextFor(4, 43))) as { responses: { errorCode: number }[] };
    assert.equal(deleted.responses[0]!.errorCode, ErrorCode.NONE);
    assert.equal(running.broker.metadata.image.topicsByName.has('forwarded'), false);
    const alterQuotas = forwardingHandler(running.broker.handlers.handlerFor('broker', AlterClientQuotas.key)!, channel);
    const quotas = (await alterQuotas.handle(
      { entries: [{ entity: [{ entityType: 'client-id', entityName: 'c1' }], ops: [{ key: 'producer_byte_rate', value: 1024, remove: false }] }], validateOnly: false } as never,
      contextFor(1, 44),
    )) as { entries: { errorCode: number; entity: { entityName: string | null }[] }[] };
    assert.deepEqual(quotas.entries.map((e) => [e.errorCode, e.entity[0]!.entityName]), [[ErrorCode.NONE, 'c1']]);
    assert.equal(running.broker.metadata.image.clientQuotas.size, 1);

    const inner = (api: typeof CreateTopics | typeof Metadata, version: number, body: Record<string, unknown>) =>
      Buffer.concat(encodeRequest(api, { apiVersion: version, correlationId: 7, clientId: 'c' }, body as never)).subarray(4);
    const createBytes = inner(CreateTopics, 7, { topics: [{ name: 'never', numPartitions: 1, replicationFactor: 1 }], timeoutMs: 1000 });
    const envelope = (overrides: Record<string, unknown>) =>
      call(controller, Envelope, 0, { requestData: createBytes, requestPrincipal: serializePrincipal('User:alice'), clientHostAddress: Buffer.from([10, 1, 2, 3]), ...overrides });
    assert.deepEqual({ ...(await envelope({ requestPrincipal: Buffer.from([0, 9]) })) }, { responseData: null, errorCode: ErrorCode.PRINCIPAL_DESERIALIZATION_FAILURE });
    assert.equal((await envelope({ clientHostAddress: Buffer.from([1, 2, 3]) })).errorCode, ErrorCode.INVALID_REQUEST);
    assert.equal((await envelope({ requestData: inner(Metadata, 12, { topics: null }) })).errorCode, ErrorCode.INVALID_REQUEST);
    assert.equal((await envelope({ requestData: Buffer.from([0, 19, 0]) })).errorCode, ErrorCode.UNSUPPORTED_VERSION);
    assert.equal(running.broker.metadata.image.topicsByName.has('never'), false);
  } finally {
    controller.close();
    channel.close();
    await running.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a forwarded CreateTopics counts against the client's controller_mutation_rate; the forwarding broker mutes the client", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spool-forwarding-quota-'));
  const running = await startBroker({ config: { 'log.dirs': dir }, logger: silentLogger });
  const controllerListener = running.broker.listeners.find((l) => l.name === 'CONTROLLER')!;
  const channel = new RpcControllerChannel({ nodeId: 2, env: realEnv, candidates: [{ host: controllerListener.advertisedHost, port: controllerListener.advertisedPort }], requestTimeoutMs: 10_000 });
  try {
    // 1 partition a second for alice: a burst of 11 tokens. The forwarding channel itself is User:ANONYMOUS, without a quota.
    const [quota] = await running.broker.controller.alterClientQuotas([{ entity: [{ entityType: 'user', entityName: 'alice' }], ops: [{ key: 'controller_mutation_rate', value: 1, remove: false }] }], { validateOnly: false });
    assert.equal(quota?.errorCode, ErrorCode.NONE);
    const createTopics = forwardingHandler(running.broker.handlers.handlerFor('broker', CreateTopics.key)!, channel);
    let mutedMs = 0;
    const topics = ['q1', 'q2', 'q3'].map((name) => ({ name, numPartitions: 10, replicationFactor: 1, assignments: [], configs: [] }));
    const created = (await createTopics.handle({ topics, timeoutMs: 10_000, validateOnly: false } as never, { ...contextFor(7, 51), throttle: (ms) => (mutedMs = ms) })) as {
      throttleTimeMs: number;
      topics: { name: string; errorCode: number }[];
    };
    assert.deepEqual(created.topics.map((t) => [t.name, t.errorCode]), [['q1', ErrorCode.NONE], ['q2', ErrorCode.NONE], ['q3', ErrorCode.THROTTLING_QUOTA_EXCEEDED]]);
    assert.ok(created.throttleTimeMs > 0 && created.throttleTimeMs <= 9000, `throttle ${created.throttleTimeMs} ms`);
    assert.equal(mutedMs, created.throttleTimeMs, "the client's connection is muted for the controller's throttle time");
  } finally {
    channel.close();
    await running.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
