/**
 * Brokers, controllers, features and producer ids (Kafka's
 * ClusterControlManager, FeatureControlManager and ProducerIdControlManager).
 *
 * Registration follows KRaft: a broker registers fenced with a new broker
 * epoch (the offset its record is written at); a new incarnation of a broker
 * that was not shut down cleanly first loses its leaderships; once caught up
 * it is unfenced, which elects it for the leaderless partitions it holds.
 */
import { ErrorCode } from '../protocol/errors.js';
import type { BrokerEndpoint } from '../metadata/image.js';
import { metadataRecord, type MetadataRecord } from '../metadata/records.js';
import type { ControllerContext } from './context.js';
import { electLeadersForUnfencedBroker, removeBrokerFromLeadership } from './replication-control.js';
import { result, type ApiError, type ControllerResult } from './result.js';

export interface BrokerRegistrationRequest {
  brokerId: number;
  incarnationId: string;
  listeners: readonly BrokerEndpoint[];
  rack: string | null;
  features: readonly { name: string; minSupportedVersion: number; maxSupportedVersion: number }[];
  logDirs: readonly string[];
}

export interface BrokerRegistrationReply extends ApiError {
  brokerEpoch: number;
}

export function registerBroker(context: ControllerContext, request: BrokerRegistrationRequest): ControllerResult<BrokerRegistrationReply> {
  const unsupported = unsupportedFeature(context, request.features);
  if (unsupported !== null) return result([], { errorCode: ErrorCode.UNSUPPORTED_VERSION, errorMessage: unsupported, brokerEpoch: -1 });
  const records: MetadataRecord[] = [];
  const existing = context.image.brokers.get(request.brokerId);
  if (existing !== undefined && existing.incarnationId !== request.incarnationId) {
    records.push(...removeBrokerFromLeadership(context.image, request.brokerId));
  }
  const brokerEpoch = context.nextWriteOffset + records.length;
  records.push(
    metadataRecord('RegisterBrokerRecord', {
      brokerId: request.brokerId,
      incarnationId: request.incarnationId,
      brokerEpoch,
      endPoints: request.listeners.map((l) => ({ name: l.name, host: l.host, port: l.port, securityProtocol: l.securityProtocol })),
      features: request.features.map((f) => ({ ...f })),
      rack: request.rack,
      fenced: true,
      inControlledShutdown: false,
      logDirs: [...request.logDirs],
    }),
  );
  return result(records, { errorCode: ErrorCode.NONE, errorMessage: null, brokerEpoch });
}

/** The finalized feature a broker cannot run, as Kafka words it, or null. */
function unsupportedFeature(context: ControllerContext, features: BrokerRegistrationRequest['features']): string | null {
  for (const [name, level] of context.image.features) {
    const range = features.find((f) => f.name === name);
    if (range === undefined && level > 0 && name === 'metadata.version') return `Unable to register because the broker does not support finalized version ${level} of ${name}.`;
    if (range !== undefined && (level < range.minSupportedVersion || level > range.maxSupportedVersion)) {
      return `Unable to register because the broker does not support finalized version ${level} of ${name}. The broker wants a version between ${range.minSupportedVersion} and ${range.maxSupportedVersion}, inclusive.`;
    }
  }
  return null;
}

/** Unfences a registered broker (it caught up with the metadata log) and elects it where partitions lack a leader. */
export function unfenceBroker(context: ControllerContext, brokerId: number, brokerEpoch: number): ControllerResult<ApiError> {
  const broker = context.image.brokers.get(brokerId);
  if (broker === undefined || broker.epoch !== brokerEpoch) {
    return result([], { errorCode: ErrorCode.STALE_BROKER_EPOCH, errorMessage: `Expected broker epoch ${broker?.epoch ?? -1}, but got ${brokerEpoch}` });
  }
  if (!broker.fenced) return result([], { errorCode: ErrorCode.NONE, errorMessage: null });
  const records: MetadataRecord[] = [metadataRecord('BrokerRegistrationChangeRecord', { brokerId, brokerEpoch, fenced: -1 })];
  records.push(...electLeadersForUnfencedBroker(context.image, brokerId, { unclean: context.config.bool('unclean.leader.election.enable') }));
  return result(records, { errorCode: ErrorCode.NONE, errorMessage: null });
}

/** Fences a broker (its session expired or it shut down) and moves its leaderships away. */
export function fenceBroker(context: ControllerContext, brokerId: number): ControllerResult<ApiError> {
  const broker = context.image.brokers.get(brokerId);
  if (broker === undefined) return result([], { errorCode: ErrorCode.BROKER_ID_NOT_REGISTERED, errorMessage: `Broker ${brokerId} is not registered.` });
  if (broker.fenced) return result([], { errorCode: ErrorCode.NONE, errorMessage: null });
  const records = removeBrokerFromLeadership(context.image, brokerId);
  records.push(metadataRecord('BrokerRegistrationChangeRecord', { brokerId, brokerEpoch: broker.epoch, fenced: 1 }));
  return result(records, { errorCode: ErrorCode.NONE, errorMessage: null });
}

export interface ControllerRegistrationRequest {
  controllerId: number;
  incarnationId: string;
  listeners: readonly BrokerEndpoint[];
  features: readonly { name: string; minSupportedVersion: number; maxSupportedVersion: number }[];
}

/** KIP-919: a controller announces its endpoints; rewritten only when they changed. */
export function registerController(context: ControllerContext, request: ControllerRegistrationRequest): ControllerResult<ApiError> {
  const existing = context.image.controllers.get(request.controllerId);
  const same =
    existing !== undefined &&
    existing.incarnationId === request.incarnationId &&
    JSON.stringify(existing.listeners) === JSON.stringify(request.listeners);
  if (same) return result([], { errorCode: ErrorCode.NONE, errorMessage: null });
  return result(
    [
      metadataRecord('RegisterControllerRecord', {
        controllerId: request.controllerId,
        incarnationId: request.incarnationId,
        endPoints: request.listeners.map((l) => ({ name: l.name, host: l.host, port: l.port, securityProtocol: l.securityProtocol })),
        features: request.features.map((f) => ({ ...f })),
      }),
    ],
    { errorCode: ErrorCode.NONE, errorMessage: null },
  );
}

/**
 * The records a new cluster starts with (Kafka's bootstrap metadata):
 * metadata.version at `level`. Written once, by the first active
 * controller, when the log holds no metadata.version yet.
 */
export function bootstrapFeatures(context: ControllerContext, level: number): ControllerResult<void> {
  if (context.image.features.has('metadata.version')) return result([], undefined);
  return result([metadataRecord('FeatureLevelRecord', { name: 'metadata.version', featureLevel: level })], undefined);
}

/** Kafka's ProducerIdManager block size. */
export const PRODUCER_ID_BLOCK_SIZE = 1000;
const PRODUCER_ID_MAX = Number.MAX_SAFE_INTEGER;

export interface ProducerIdBlock {
  /** NONE, STALE_BROKER_EPOCH, or UNKNOWN_SERVER_ERROR once ids are exhausted. */
  errorCode: number;
  producerIdStart: number;
  producerIdLen: number;
}

/** Hands the next block of producer ids to a broker (AllocateProducerIds). */
export function allocateProducerIds(context: ControllerContext, brokerId: number, brokerEpoch: number): ControllerResult<ProducerIdBlock> {
  const broker = context.image.brokers.get(brokerId);
  if (broker === undefined || broker.epoch !== brokerEpoch) {
    return result([], { errorCode: ErrorCode.STALE_BROKER_EPOCH, producerIdStart: -1, producerIdLen: 0 });
  }
  const start = context.image.nextProducerId;
  if (start > PRODUCER_ID_MAX - PRODUCER_ID_BLOCK_SIZE) return result([], { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, producerIdStart: -1, producerIdLen: 0 });
  const next = start + PRODUCER_ID_BLOCK_SIZE;
  return result([metadataRecord('ProducerIdsRecord', { brokerId, brokerEpoch, nextProducerId: next })], {
    errorCode: ErrorCode.NONE,
    producerIdStart: start,
    producerIdLen: PRODUCER_ID_BLOCK_SIZE,
  });
}
