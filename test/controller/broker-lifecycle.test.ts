/**
 * Proves the controller's side of the broker lifecycle (Kafka's
 * BrokerHeartbeatManager, ClusterControlManager and the fencing half of
 * ReplicationControlManager) on the real QuorumController, its records
 * committed by a fake one-voter Raft and its session timer driven by a
 * ManualClock: registration (incarnations, duplicates, cluster id,
 * features, log directories), heartbeats (unfenced once caught up to the
 * registration), fencing after broker.session.timeout.ms with leaders moved
 * (from the ISR, else leaderless), unfencing on return, controlled shutdown,
 * UnregisterBroker and producer-id blocks unique across brokers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/io/clock.js';
import { SeededRandom } from '../../src/io/random.js';
import { BrokerConfig } from '../../src/common/config.js';
import { KafkaConfigSchema } from '../../src/metadata/config-schema.js';
import type { MetadataRecord } from '../../src/metadata/records.js';
import { NotControllerError, QuorumController } from '../../src/controller/quorum-controller.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { CLUSTER_ID, registrationOf, uuidOf } from './helpers.js';

const SESSION_TIMEOUT_MS = 9000;
const HEARTBEAT_INTERVAL_MS = 2000;

/** A QuorumController over a Raft that commits every append at once. */
async function activeController(config: Record<string, string | number | boolean> = {}): Promise<{ controller: QuorumController; clock: ManualClock }> {
  const clock = new ManualClock();
  const brokerConfig = BrokerConfig.fromObject(config);
  let endOffset = 0;
  let controller: QuorumController;
  const raft = {
    get logEndOffset() {
      return endOffset;
    },
    async append(records: readonly MetadataRecord[]) {
      const baseOffset = endOffset;
      endOffset += records.length;
      const batch = { baseOffset, lastOffset: endOffset - 1, epoch: 1, appendTimestamp: clock.nowMs(), sizeInBytes: 0, records: [...records], control: [] };
      controller.handleCommit(batch);
      return { baseOffset, lastOffset: batch.lastOffset, epoch: 1 };
    },
  };
  controller = new QuorumController({
    nodeId: 0,
    clusterId: CLUSTER_ID,
    config: brokerConfig,
    configSchema: new KafkaConfigSchema(brokerConfig, 0),
    random: new SeededRandom(3),
    clock,
    timers: clock,
    raft,
    bootstrapMetadataVersion: 25,
  });
  controller.handleLeaderChange({ leaderId: 0, epoch: 1 });
  await controller.activate();
  return { controller, clock };
}

/** Registers `id` and heartbeats it unfenced, caught up with everything. */
async function startBroker(controller: QuorumController, id: number, rack: string | null = null): Promise<number> {
  const registered = await controller.registerBroker(registrationOf(id, { rack }));
  assert.equal(registered.response.errorCode, ErrorCode.NONE);
  const epoch = registered.response.brokerEpoch;
  const reply = await heartbeat(controller, id, epoch);
  assert.equal(reply.isFenced, false, `broker ${id} unfenced`);
  return epoch;
}

async function heartbeat(controller: QuorumController, brokerId: number, brokerEpoch: number, options: { wantFence?: boolean; wantShutDown?: boolean; offset?: number } = {}) {
  const written = await controller.processBrokerHeartbeat({
    brokerId,
    brokerEpoch,
    currentMetadataOffset: options.offset ?? controller.image.offset,
    wantFence: options.wantFence ?? false,
    wantShutDown: options.wantShutDown ?? false,
  });
  return written.response;
}

async function createTopic(controller: QuorumController, name: string, assignments: number[][]): Promise<void> {
  const written = await controller.createTopics(
    [{ name, numPartitions: -1, replicationFactor: -1, assignments: assignments.map((brokerIds, partitionIndex) => ({ partitionIndex, brokerIds })), configs: [] }],
    { validateOnly: false },
  );
  assert.equal(written.response[0]!.errorCode, ErrorCode.NONE);
}

function partition(controller: QuorumController, topic: string, index: number) {
  return controller.image.topicsByName.get(topic)!.partitions.get(index)!;
}

/** Lets queued controller operations (the stale-broker check) run. */
async function drain(controller: QuorumController): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
  await controller.processBrokerHeartbeat({ brokerId: -1, brokerEpoch: -1, currentMetadataOffset: 0, wantFence: true, wantShutDown: false });
}

test('a broker stays fenced until it has caught up with its registration, then is unfenced', async () => {
  const { controller } = await activeController();
  const registered = await controller.registerBroker(registrationOf(1));
  const epoch = registered.response.brokerEpoch;
  const registrationOffset = controller.image.offset;
  const behind = await heartbeat(controller, 1, epoch, { offset: registrationOffset - 1 });
  assert.deepEqual({ ...behind }, { errorCode: 0, errorMessage: null, isCaughtUp: false, isFenced: true, inControlledShutdown: false, shouldShutDown: false });
  const recovering = await heartbeat(controller, 1, epoch, { offset: registrationOffset, wantFence: true });
  assert.equal(recovering.isCaughtUp, true);
  assert.equal(recovering.isFenced, true);
  assert.equal(controller.image.brokers.get(1)!.fenced, true);
  const unfenced = await heartbeat(controller, 1, epoch, { offset: registrationOffset });
  assert.equal(unfenced.isFenced, false);
  assert.equal(controller.image.brokers.get(1)!.fenced, false);
});

test('heartbeats with a wrong epoch or before registration answer STALE_BROKER_EPOCH, fenced', async () => {
  const { controller } = await activeController();
  const epoch = await startBroker(controller, 1);
  const stale = await heartbeat(controller, 1, epoch + 5);
  assert.equal(stale.errorCode, ErrorCode.STALE_BROKER_EPOCH);
  assert.equal(stale.isFenced, true);
  assert.equal((await heartbeat(controller, 9, 0)).errorCode, ErrorCode.STALE_BROKER_EPOCH);
});

test('registration: a second incarnation is a duplicate while the first heartbeats, and replaces it once its session expired', async () => {
  const { controller, clock } = await activeController();
  const epoch = await startBroker(controller, 1);
  const other = registrationOf(1, { incarnationId: uuidOf(200) });
  assert.equal((await controller.registerBroker(other)).response.errorCode, ErrorCode.DUPLICATE_BROKER_REGISTRATION);
  // The same incarnation registering again keeps its epoch and its unfenced state.
  const again = await controller.registerBroker(registrationOf(1));
  assert.equal(again.response.brokerEpoch, epoch);
  assert.equal(controller.image.brokers.get(1)!.fenced, false);
  clock.advance(SESSION_TIMEOUT_MS + 1);
  await drain(controller);
  assert.equal(controller.image.brokers.get(1)!.fenced, true);
  const replaced = await controller.registerBroker(other);
  assert.equal(replaced.response.errorCode, ErrorCode.NONE);
  assert.ok(replaced.response.brokerEpoch > epoch);
});

test('registration is refused with Kafka codes: another cluster, no or shared log directories, unsupported features', async () => {
  const { controller } = await activeController();
  await startBroker(controller, 1);
  const refusal = async (overrides: Parameters<typeof registrationOf>[1]) => (await controller.registerBroker(registrationOf(2, overrides))).response.errorCode;
  assert.equal(await refusal({ clusterId: 'AAAAAAAAAAAAAAAAAAAAAA' }), ErrorCode.INCONSISTENT_CLUSTER_ID);
  assert.equal(await refusal({ logDirs: [] }), ErrorCode.INVALID_REGISTRATION);
  assert.equal(await refusal({ logDirs: [uuidOf(0)] }), ErrorCode.INVALID_REGISTRATION);
  assert.equal(await refusal({ logDirs: [uuidOf(101)] }), ErrorCode.INVALID_REGISTRATION);
  assert.equal(await refusal({ features: [] }), ErrorCode.UNSUPPORTED_VERSION);
  assert.equal(await refusal({ features: [{ name: 'metadata.version', minSupportedVersion: 7, maxSupportedVersion: 25 }, { name: 'kraft.version', minSupportedVersion: 1, maxSupportedVersion: 1 }] }), ErrorCode.UNSUPPORTED_VERSION);
  assert.equal(await refusal({}), ErrorCode.NONE);
});

test('a broker that stops heartbeating is fenced after broker.session.timeout.ms; leaders move to the ISR, RF=1 partitions lose theirs', async () => {
  const { controller, clock } = await activeController();
  const epochs = new Map<number, number>();
  for (const id of [1, 2, 3]) epochs.set(id, await startBroker(controller, id));
  await createTopic(controller, 'replicated', [[3, 1, 2]]);
  await createTopic(controller, 'single', [[3]]);
  assert.equal(partition(controller, 'replicated', 0).leader, 3);
  for (let elapsedMs = 0; elapsedMs <= SESSION_TIMEOUT_MS; elapsedMs += HEARTBEAT_INTERVAL_MS) {
    clock.advance(HEARTBEAT_INTERVAL_MS);
    for (const id of [1, 2]) await heartbeat(controller, id, epochs.get(id)!);
  }
  await drain(controller);
  assert.equal(controller.image.brokers.get(3)!.fenced, true);
  assert.equal(controller.image.brokers.get(1)!.fenced, false);
  const replicated = partition(controller, 'replicated', 0);
  assert.equal(replicated.leader, 1, 'the first ISR replica in replica order leads');
  assert.deepEqual(replicated.isr, [1, 2]);
  assert.equal(replicated.leaderEpoch, 1);
  const single = partition(controller, 'single', 0);
  assert.equal(single.leader, -1);
  assert.deepEqual(single.isr, [3], 'the last ISR member stays, to lead again cleanly');

  // Back: unfenced once caught up, and elected where the partition has no leader.
  const back = await heartbeat(controller, 3, epochs.get(3)!);
  assert.equal(back.isFenced, false);
  assert.equal(partition(controller, 'single', 0).leader, 3);
  assert.equal(partition(controller, 'single', 0).leaderEpoch, 2);
  assert.equal(partition(controller, 'replicated', 0).leader, 1, 'no ISR rejoin without replication');
});

test('with unclean.leader.election.enable a fenced leader is replaced by any live replica, which recovers', async () => {
  const { controller, clock } = await activeController({ 'unclean.leader.election.enable': true });
  const epochs = new Map<number, number>();
  for (const id of [1, 2]) epochs.set(id, await startBroker(controller, id));
  await createTopic(controller, 'u', [[1, 2]]);
  await controller.processBrokerHeartbeat({ brokerId: 2, brokerEpoch: epochs.get(2)!, currentMetadataOffset: controller.image.offset, wantFence: true, wantShutDown: false });
  assert.deepEqual(partition(controller, 'u', 0).isr, [1]);
  await heartbeat(controller, 2, epochs.get(2)!);
  clock.advance(SESSION_TIMEOUT_MS / 2);
  await heartbeat(controller, 2, epochs.get(2)!);
  clock.advance(SESSION_TIMEOUT_MS / 2 + 1);
  await drain(controller);
  const unclean = partition(controller, 'u', 0);
  assert.equal(unclean.leader, 2);
  assert.deepEqual(unclean.isr, [2]);
});

test('controlled shutdown moves the leaders away, then answers shouldShutDown once every active broker has seen it', async () => {
  const { controller } = await activeController();
  const epochs = new Map<number, number>();
  for (const id of [1, 2]) epochs.set(id, await startBroker(controller, id));
  await createTopic(controller, 'moving', [[2, 1]]);
  await createTopic(controller, 'alone', [[2]]);
  const before = controller.image.offset;
  const first = await heartbeat(controller, 2, epochs.get(2)!, { wantShutDown: true });
  assert.deepEqual({ isFenced: first.isFenced, inControlledShutdown: first.inControlledShutdown, shouldShutDown: first.shouldShutDown }, { isFenced: false, inControlledShutdown: true, shouldShutDown: false });
  assert.equal(controller.image.brokers.get(2)!.inControlledShutdown, true);
  assert.equal(partition(controller, 'moving', 0).leader, 1);
  assert.equal(partition(controller, 'alone', 0).leader, -1);
  // Broker 1 has not yet applied the shutdown's records: broker 2 must wait.
  await heartbeat(controller, 1, epochs.get(1)!, { offset: before });
  const waiting = await heartbeat(controller, 2, epochs.get(2)!, { wantShutDown: true });
  assert.equal(waiting.shouldShutDown, false);
  await heartbeat(controller, 1, epochs.get(1)!);
  const done = await heartbeat(controller, 2, epochs.get(2)!, { wantShutDown: true });
  assert.equal(done.shouldShutDown, true);
  assert.equal(done.isFenced, true);
  assert.equal(controller.image.brokers.get(2)!.fenced, true);
});

test('a broker without leaderships shuts down at once', async () => {
  const { controller } = await activeController();
  const epoch = await startBroker(controller, 1);
  const reply = await heartbeat(controller, 1, epoch, { wantShutDown: true });
  assert.equal(reply.shouldShutDown, true);
  assert.equal(controller.image.brokers.get(1)!.fenced, true);
});

test('UnregisterBroker takes the broker out of ISRs and the cluster; an unknown one is BROKER_ID_NOT_REGISTERED', async () => {
  const { controller } = await activeController();
  for (const id of [1, 2]) await startBroker(controller, id);
  await createTopic(controller, 'x', [[2, 1]]);
  assert.equal((await controller.unregisterBroker(7)).response.errorCode, ErrorCode.BROKER_ID_NOT_REGISTERED);
  assert.equal((await controller.unregisterBroker(2)).response.errorCode, ErrorCode.NONE);
  assert.equal(controller.image.brokers.has(2), false);
  assert.equal(partition(controller, 'x', 0).leader, 1);
  assert.deepEqual(partition(controller, 'x', 0).isr, [1]);
});

test('producer id blocks are unique across brokers and need the current broker epoch', async () => {
  const { controller } = await activeController();
  const epochs = new Map<number, number>();
  for (const id of [1, 2]) epochs.set(id, await startBroker(controller, id));
  const starts: number[] = [];
  for (const id of [1, 2, 1, 2]) {
    const block = (await controller.allocateProducerIds(id, epochs.get(id)!)).response;
    assert.equal(block.errorCode, ErrorCode.NONE);
    starts.push(block.producerIdStart);
  }
  assert.deepEqual(starts, [0, 1000, 2000, 3000]);
  assert.equal((await controller.allocateProducerIds(1, 12345)).response.errorCode, ErrorCode.STALE_BROKER_EPOCH);
});

test('an inactive controller refuses with NotControllerError and stops checking sessions', async () => {
  const { controller, clock } = await activeController();
  await startBroker(controller, 1);
  controller.handleLeaderChange({ leaderId: 5, epoch: 2 });
  await assert.rejects(controller.registerBroker(registrationOf(2)), NotControllerError);
  clock.advance(SESSION_TIMEOUT_MS * 2);
  assert.equal(clock.pendingCount, 0);
  assert.equal(controller.image.brokers.get(1)!.fenced, false);
});
