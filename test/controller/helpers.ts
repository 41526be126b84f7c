/**
 * Fixtures for controller tests: a controller context over an image, replay
 * of an operation's records into the next image (the way commits work), and
 * clusters of registered brokers built through the controller's own
 * registration operations.
 */
import { SeededRandom } from '../../src/io/random.js';
import { BrokerConfig } from '../../src/common/config.js';
import type { ControllerContext } from '../../src/controller/context.js';
import { processBrokerHeartbeat, registerBroker, type BrokerHeartbeatReply, type BrokerRegistrationRequest } from '../../src/controller/cluster-control.js';
import { BrokerHeartbeatManager } from '../../src/controller/broker-heartbeat-manager.js';
import { ManualClock } from '../../src/io/clock.js';
import type { ControllerResult } from '../../src/controller/result.js';
import { KafkaConfigSchema } from '../../src/metadata/config-schema.js';
import { supportedFeatureRanges } from '../../src/metadata/features.js';
import { applyRecords, emptyImage } from '../../src/metadata/delta.js';
import type { MetadataImage } from '../../src/metadata/image.js';
import { metadataRecord, type MetadataRecord } from '../../src/metadata/records.js';

export const CLUSTER_ID = 'Q1ZfnH2sT0KvG0bq3i4oOQ';

export function contextFor(image: MetadataImage, config: Record<string, string | number | boolean> = {}, seed = 7): ControllerContext {
  const brokerConfig = BrokerConfig.fromObject(config);
  return {
    image,
    nodeId: 1,
    config: brokerConfig,
    configSchema: new KafkaConfigSchema(brokerConfig, 1),
    random: new SeededRandom(seed),
    nextWriteOffset: image.offset + 1,
  };
}

/** Replays records as one committed batch after the image's offset. */
export function replay(image: MetadataImage, records: readonly MetadataRecord[]): MetadataImage {
  return applyRecords(image, records.map((record, index) => ({ record, offset: image.offset + 1 + index }))).image;
}

/** Runs an operation and replays what it wrote: operation -> records -> replay -> state. */
export function commit<T>(image: MetadataImage, run: (context: ControllerContext) => ControllerResult<T>, config: Record<string, string | number | boolean> = {}): { image: MetadataImage; response: T; records: MetadataRecord[] } {
  const outcome = run(contextFor(image, config));
  return { image: replay(image, outcome.records), response: outcome.response, records: outcome.records };
}

/** A canonical base64url uuid made of one repeated byte. */
export function uuidOf(byte: number): string {
  return Buffer.alloc(16, byte).toString('base64url');
}

export function bootstrapped(): MetadataImage {
  return replay(emptyImage(CLUSTER_ID), [metadataRecord('FeatureLevelRecord', { name: 'metadata.version', featureLevel: 25 })]);
}

/** A controller with no live broker sessions (registrations are never duplicates). */
export const NO_SESSIONS = { hasValidSession: () => false };

/** Broker `id`'s registration request: one listener, one log directory, the feature ranges Spool supports. */
export function registrationOf(id: number, overrides: globalThis.Partial<BrokerRegistrationRequest> = {}): BrokerRegistrationRequest {
  return {
    brokerId: id,
    clusterId: CLUSTER_ID,
    incarnationId: uuidOf(id),
    listeners: [{ name: 'PLAINTEXT', host: 'localhost', port: 9090 + id, securityProtocol: 0 }],
    rack: null,
    features: supportedFeatureRanges(),
    logDirs: [uuidOf(100 + id)],
    ...overrides,
  };
}

/** Broker `id` heartbeats once, caught up with the whole image, asking to be unfenced (a fenced session of its own). */
export function unfence(image: MetadataImage, id: number): { image: MetadataImage; response: BrokerHeartbeatReply; records: MetadataRecord[] } {
  const sessions = new BrokerHeartbeatManager(new ManualClock(), 9000);
  sessions.register(id, true);
  const request = { brokerId: id, brokerEpoch: image.brokers.get(id)?.epoch ?? -1, currentMetadataOffset: image.offset, wantFence: false, wantShutDown: false };
  return commit(image, (context) => processBrokerHeartbeat(context, request, { sessions, registerBrokerRecordOffset: image.offset }));
}

/** A cluster with `ids` registered and unfenced (each with one log directory). */
export function clusterWith(ids: readonly number[], racks: ReadonlyMap<number, string> = new Map()): MetadataImage {
  let image = bootstrapped();
  for (const id of ids) {
    image = commit(image, (context) => registerBroker(context, registrationOf(id, { rack: racks.get(id) ?? null }), NO_SESSIONS)).image;
    image = unfence(image, id).image;
  }
  return image;
}
