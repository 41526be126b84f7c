/**
 * Fixtures for controller tests: a controller context over an image, replay
 * of an operation's records into the next image (the way commits work), and
 * clusters of registered brokers built through the controller's own
 * registration operations.
 */
import { SeededRandom } from '../../src/io/random.js';
import { BrokerConfig } from '../../src/common/config.js';
import type { ControllerContext } from '../../src/controller/context.js';
import { registerBroker, unfenceBroker } from '../../src/controller/cluster-control.js';
import type { ControllerResult } from '../../src/controller/result.js';
import { KafkaConfigSchema } from '../../src/metadata/config-schema.js';
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

/** A cluster with `ids` registered and unfenced (each with one log directory). */
export function clusterWith(ids: readonly number[]): MetadataImage {
  let image = bootstrapped();
  for (const id of ids) {
    const registered = commit(image, (context) =>
      registerBroker(context, {
        brokerId: id,
        incarnationId: uuidOf(id),
        listeners: [{ name: 'PLAINTEXT', host: 'localhost', port: 9090 + id, securityProtocol: 0 }],
        rack: null,
        features: [{ name: 'metadata.version', minSupportedVersion: 7, maxSupportedVersion: 25 }],
        logDirs: [uuidOf(100 + id)],
      }),
    );
    image = commit(registered.image, (context) => unfenceBroker(context, id, registered.response.brokerEpoch)).image;
  }
  return image;
}
