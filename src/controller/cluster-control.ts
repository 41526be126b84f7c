/**
 * Brokers, controllers, features and producer ids (Kafka's
 * ClusterControlManager, FeatureControlManager and ProducerIdControlManager,
 * and the broker-state half of ReplicationControlManager).
 *
 * Registration follows KRaft: a new incarnation of a broker registers fenced
 * with a new broker epoch (the offset its batch is written at) and first
 * loses its leaderships (it may have stopped uncleanly); the same
 * incarnation registering again keeps its epoch and state. Heartbeats move
 * a broker between fenced, unfenced and controlled shutdown (the rules are
 * in broker-heartbeat-manager.ts); each move writes the records Kafka
 * writes, leaders moving with them.
 */
import { ErrorCode } from '../protocol/errors.js';
import type { BrokerEndpoint } from '../metadata/image.js';
import { metadataRecord, type MetadataRecord } from '../metadata/records.js';
import { SHARE_VERSION_FEATURE, TRANSACTION_VERSION_FEATURE, defaultShareVersion, defaultTransactionVersion } from '../metadata/features.js';
import { BrokerControlState, stateFlags, type BrokerHeartbeatManager } from './broker-heartbeat-manager.js';
import type { ControllerContext } from './context.js';
import { NO_LEADER, generateLeaderAndIsrUpdates, hasLeaderships, partitionsWithBrokerInElr, partitionsWithBrokerInIsr, partitionsWithNoLeader } from './replication-control.js';
import { result, type ApiError, type ControllerResult } from './result.js';
import { brokerShutdownRecords } from './elections.js';

export interface FeatureRange {
  name: string;
  minSupportedVersion: number;
  maxSupportedVersion: number;
}

export interface BrokerRegistrationRequest {
  brokerId: number;
  clusterId: string;
  incarnationId: string;
  listeners: readonly BrokerEndpoint[];
  rack: string | null;
  features: readonly FeatureRange[];
  logDirs: readonly string[];
  isMigratingZkBroker?: boolean;
  /** The broker epoch its last clean shutdown recorded (BrokerRegistration v3+, KIP-966); -1 after an unclean one. */
  previousBrokerEpoch?: number;
}

export interface BrokerRegistrationReply extends ApiError {
  brokerEpoch: number;
}

const registrationError = (errorCode: number, errorMessage: string): ControllerResult<BrokerRegistrationReply> => result([], { errorCode, errorMessage, brokerEpoch: -1 });

/**
 * Kafka's ClusterControlManager.registerBroker. `sessions` tells whether the
 * registered incarnation still heartbeats (another incarnation is then a
 * duplicate); the caller updates the session once the records are written.
 */
export function registerBroker(
  context: ControllerContext,
  request: BrokerRegistrationRequest,
  sessions: Pick<BrokerHeartbeatManager, 'hasValidSession'>,
): ControllerResult<BrokerRegistrationReply> {
  const { image } = context;
  if (request.clusterId !== image.clusterId) {
    return registrationError(ErrorCode.INCONSISTENT_CLUSTER_ID, `Expected cluster ID ${image.clusterId}, but got cluster ID ${request.clusterId}`);
  }
  const existing = image.brokers.get(request.brokerId);
  if (existing !== undefined && sessions.hasValidSession(request.brokerId) && existing.incarnationId !== request.incarnationId) {
    return registrationError(ErrorCode.DUPLICATE_BROKER_REGISTRATION, 'Another broker is registered with that broker id.');
  }
  if (request.isMigratingZkBroker === true) return registrationError(ErrorCode.BROKER_ID_NOT_REGISTERED, 'Controller does not support registering ZK brokers.');
  const invalidDirs = invalidLogDirs(context, request);
  if (invalidDirs !== null) return registrationError(ErrorCode.INVALID_REGISTRATION, invalidDirs);
  const unsupported = unsupportedFeature(context, request.features);
  if (unsupported !== null) return registrationError(ErrorCode.UNSUPPORTED_VERSION, unsupported);
  const newIncarnation = existing?.incarnationId !== request.incarnationId;
  // A new incarnation may follow an unclean shutdown: its old leaderships go first.
  const cleanShutdown = existing !== undefined && existing.epoch === (request.previousBrokerEpoch ?? -1);
  const records = newIncarnation ? brokerShutdownRecords(context, request.brokerId, { cleanShutdown }) : [];
  const brokerEpoch = newIncarnation || existing === undefined ? context.nextWriteOffset : existing.epoch;
  records.push(
    metadataRecord('RegisterBrokerRecord', {
      brokerId: request.brokerId,
      isMigratingZkBroker: false,
      incarnationId: request.incarnationId,
      brokerEpoch,
      endPoints: request.listeners.map((l) => ({ name: l.name, host: l.host, port: l.port, securityProtocol: l.securityProtocol })),
      features: registeredFeatures(request.features),
      rack: request.rack,
      fenced: newIncarnation || existing === undefined ? true : existing.fenced,
      inControlledShutdown: newIncarnation || existing === undefined ? false : existing.inControlledShutdown,
      logDirs: [...request.logDirs],
    }),
  );
  return result(records, { errorCode: ErrorCode.NONE, errorMessage: null, brokerEpoch });
}

/** The broker's features as recorded; one that sends no metadata.version range is taken to support only level 1. */
function registeredFeatures(features: readonly FeatureRange[]): FeatureRange[] {
  const recorded = features.map((f) => ({ ...f }));
  if (!features.some((f) => f.name === METADATA_VERSION)) recorded.push({ name: METADATA_VERSION, minSupportedVersion: 1, maxSupportedVersion: 1 });
  return recorded;
}

const METADATA_VERSION = 'metadata.version';

/** Kafka's DirectoryId.reserved: the ids 0..99 (UNASSIGNED, LOST, MIGRATING and room for more). */
function isReservedDirectoryId(id: string): boolean {
  const bytes = Buffer.from(id, 'base64url');
  return bytes.readBigUInt64BE(0) === 0n && bytes.readBigInt64BE(8) < 100n;
}

/** Why the log directories cannot be registered (metadata.version 3.7-IV2+ assigns partitions to directories), or null. */
function invalidLogDirs(context: ControllerContext, request: BrokerRegistrationRequest): string | null {
  if (request.logDirs.length === 0) return 'No directories specified in request';
  if (request.logDirs.some(isReservedDirectoryId)) return 'Reserved directory ID in request';
  if (new Set(request.logDirs).size !== request.logDirs.length) return 'Duplicate directory ID in request';
  for (const directory of request.logDirs) {
    for (const broker of context.image.brokers.values()) {
      if (broker.id !== request.brokerId && broker.logDirs.includes(directory)) return `Broker ${broker.id} is already registered with directory ${directory}`;
    }
  }
  return null;
}

/**
 * The first finalized feature level the broker cannot run, as Kafka words
 * it, or null. Every feature the broker names must include its finalized
 * level (metadata.version defaults to 1, others to 0); a finalized feature
 * the broker does not name must be at level 0.
 */
function unsupportedFeature(context: ControllerContext, features: readonly FeatureRange[]): string | null {
  const finalized = context.image.features;
  for (const feature of registeredFeatures(features)) {
    const level = finalized.get(feature.name) ?? (feature.name === METADATA_VERSION ? 1 : 0);
    if (level < feature.minSupportedVersion || level > feature.maxSupportedVersion) return unsupportedMessage(feature, level);
  }
  for (const [name, level] of finalized) {
    if (level !== 0 && !features.some((f) => f.name === name)) return unsupportedMessage({ name, minSupportedVersion: 0, maxSupportedVersion: 0 }, level);
  }
  return null;
}

function unsupportedMessage(feature: FeatureRange, level: number): string {
  return (
    `Unable to register because the broker does not support finalized version ${level} of ${feature.name}. ` +
    `The broker wants a version between ${feature.minSupportedVersion} and ${feature.maxSupportedVersion}, inclusive.`
  );
}

/** STALE_BROKER_EPOCH unless `brokerEpoch` is the broker's registered epoch (Kafka's checkBrokerEpoch). */
export function checkBrokerEpoch(context: ControllerContext, brokerId: number, brokerEpoch: number): ApiError | null {
  const broker = context.image.brokers.get(brokerId);
  if (broker === undefined) return { errorCode: ErrorCode.STALE_BROKER_EPOCH, errorMessage: `No broker registration found for broker id ${brokerId}` };
  if (broker.epoch !== brokerEpoch) return { errorCode: ErrorCode.STALE_BROKER_EPOCH, errorMessage: `Expected broker epoch ${broker.epoch}, but got broker epoch ${brokerEpoch}` };
  return null;
}

export interface BrokerHeartbeatRequest {
  brokerId: number;
  brokerEpoch: number;
  currentMetadataOffset: number;
  wantFence: boolean;
  wantShutDown: boolean;
}

export interface BrokerHeartbeatReply extends ApiError {
  isCaughtUp: boolean;
  isFenced: boolean;
  inControlledShutdown: boolean;
  shouldShutDown: boolean;
}

const heartbeatError = (error: ApiError): ControllerResult<BrokerHeartbeatReply> =>
  result([], { ...error, isCaughtUp: false, isFenced: true, inControlledShutdown: false, shouldShutDown: false });

/**
 * Kafka's processBrokerHeartbeat: the broker's next state, the records that
 * move it there, and the session touched. `registerBrokerRecordOffset` is
 * where the broker's registration was written; a broker that has applied
 * the log that far is caught up and may be unfenced.
 */
export function processBrokerHeartbeat(
  context: ControllerContext,
  request: BrokerHeartbeatRequest,
  options: { sessions: BrokerHeartbeatManager; registerBrokerRecordOffset: number | null },
): ControllerResult<BrokerHeartbeatReply> {
  const { brokerId, brokerEpoch } = request;
  if (options.registerBrokerRecordOffset === null) {
    return heartbeatError({ errorCode: ErrorCode.STALE_BROKER_EPOCH, errorMessage: `Receive a heartbeat from broker ${brokerId} before registration` });
  }
  const stale = checkBrokerEpoch(context, brokerId, brokerEpoch);
  if (stale !== null) return heartbeatError(stale);
  const registerBrokerRecordOffset = options.registerBrokerRecordOffset;
  const current = options.sessions.currentState(brokerId);
  const next = options.sessions.nextState(brokerId, request, { registerBrokerRecordOffset, hasLeaderships: () => hasLeaderships(context.image, brokerId) });
  const records = current === next ? [] : transitionRecords(context, { brokerId, brokerEpoch, next });
  options.sessions.touch(brokerId, stateFlags.fenced(next), request.currentMetadataOffset);
  return result(records, {
    errorCode: ErrorCode.NONE,
    errorMessage: null,
    isCaughtUp: request.currentMetadataOffset >= registerBrokerRecordOffset,
    isFenced: stateFlags.fenced(next),
    inControlledShutdown: stateFlags.inControlledShutdown(next),
    shouldShutDown: stateFlags.shouldShutDown(next),
  });
}

function transitionRecords(context: ControllerContext, change: { brokerId: number; brokerEpoch: number; next: BrokerControlState }): MetadataRecord[] {
  switch (change.next) {
    case BrokerControlState.FENCED:
    case BrokerControlState.SHUTDOWN_NOW:
      return fencingRecords(context, change.brokerId);
    case BrokerControlState.UNFENCED:
      return unfencingRecords(context, change.brokerId, change.brokerEpoch);
    case BrokerControlState.CONTROLLED_SHUTDOWN:
      return controlledShutdownRecords(context, change.brokerId, change.brokerEpoch);
  }
}

/** Kafka's handleBrokerFenced: the broker leaves every ISR and leadership, then is fenced. */
export function fencingRecords(context: ControllerContext, brokerId: number): MetadataRecord[] {
  const broker = context.image.brokers.get(brokerId);
  if (broker === undefined) throw new Error(`cannot fence unregistered broker ${brokerId}`);
  const records = generateLeaderAndIsrUpdates(context, { brokerToRemove: brokerId, brokerToAdd: NO_LEADER }, partitionsWithBrokerInIsr(context.image, brokerId));
  records.push(metadataRecord('BrokerRegistrationChangeRecord', { brokerId, brokerEpoch: broker.epoch, fenced: 1 }));
  return records;
}

/** Kafka's handleBrokerUnfenced: unfenced, then elected wherever a partition it can lead has no leader. */
function unfencingRecords(context: ControllerContext, brokerId: number, brokerEpoch: number): MetadataRecord[] {
  return [
    metadataRecord('BrokerRegistrationChangeRecord', { brokerId, brokerEpoch, fenced: -1 }),
    ...generateLeaderAndIsrUpdates(context, { brokerToRemove: NO_LEADER, brokerToAdd: brokerId }, partitionsWithNoLeader(context.image)),
  ];
}

/** Kafka's handleBrokerInControlledShutdown: marked as shutting down, then out of every ISR and leadership. */
function controlledShutdownRecords(context: ControllerContext, brokerId: number, brokerEpoch: number): MetadataRecord[] {
  const records: MetadataRecord[] = [];
  if (context.image.brokers.get(brokerId)?.inControlledShutdown !== true) {
    records.push(metadataRecord('BrokerRegistrationChangeRecord', { brokerId, brokerEpoch, inControlledShutdown: 1 }));
  }
  records.push(...generateLeaderAndIsrUpdates(context, { brokerToRemove: brokerId, brokerToAdd: NO_LEADER }, partitionsWithBrokerInIsr(context.image, brokerId)));
  return records;
}

/** Kafka's unregisterBroker: out of every ISR and leadership, then the registration is removed. */
export function unregisterBroker(context: ControllerContext, brokerId: number): ControllerResult<ApiError> {
  const broker = context.image.brokers.get(brokerId);
  if (broker === undefined) return result([], { errorCode: ErrorCode.BROKER_ID_NOT_REGISTERED, errorMessage: `Broker ID ${brokerId} is not currently registered` });
  const removal = { brokerToRemove: brokerId, brokerToAdd: NO_LEADER };
  const records = [
    ...generateLeaderAndIsrUpdates(context, removal, partitionsWithBrokerInIsr(context.image, brokerId)),
    ...generateLeaderAndIsrUpdates(context, removal, partitionsWithBrokerInElr(context.image, brokerId)),
  ];
  records.push(metadataRecord('UnregisterBrokerRecord', { brokerId, brokerEpoch: broker.epoch }));
  return result(records, { errorCode: ErrorCode.NONE, errorMessage: null });
}

/** Kafka's maybeFenceOneStaleBroker: fences the broker whose session expired first, if any. */
export function maybeFenceOneStaleBroker(context: ControllerContext, sessions: BrokerHeartbeatManager): ControllerResult<number | null> {
  const brokerId = sessions.findOneStaleBroker();
  if (brokerId === null) return result([], null);
  sessions.fence(brokerId);
  if (!context.image.brokers.has(brokerId)) return result([], null);
  return result(fencingRecords(context, brokerId), brokerId);
}

export interface ControllerRegistrationRequest {
  controllerId: number;
  incarnationId: string;
  listeners: readonly BrokerEndpoint[];
  features: readonly FeatureRange[];
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
 * The records a new cluster that was not formatted starts with (Kafka's
 * bootstrap metadata): metadata.version at `level`, transaction.version at
 * its default for that level, and share.version 1, as `spool storage format`
 * writes them.
 * Written once, by the first active controller, when the log holds no
 * metadata.version yet.
 */
export function bootstrapFeatures(context: ControllerContext, level: number): ControllerResult<void> {
  if (context.image.features.has('metadata.version')) return result([], undefined);
  const records = [metadataRecord('FeatureLevelRecord', { name: 'metadata.version', featureLevel: level })];
  const transactionVersion = defaultTransactionVersion(level);
  if (transactionVersion > 0) records.push(metadataRecord('FeatureLevelRecord', { name: TRANSACTION_VERSION_FEATURE, featureLevel: transactionVersion }));
  records.push(metadataRecord('FeatureLevelRecord', { name: SHARE_VERSION_FEATURE, featureLevel: defaultShareVersion() }));
  return result(records, undefined);
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
