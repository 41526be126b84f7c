/**
 * UpdateFeatures on the controller, as Kafka 4.4's FeatureControlManager
 * (KIP-584, KIP-778): each feature's new level is checked against this
 * controller's supported range, every registered broker's, and every other
 * voter's ControllerRegistration (a voter that never registered refuses the
 * change); a lower level needs a SAFE or UNSAFE downgrade type and a higher
 * one an UPGRADE. A metadata.version downgrade is refused when any level
 * in between changed the metadata format (Kafka's didMetadataChange), safe
 * or unsafe. Other features must meet their dependencies (eligible.leader
 * .replicas.version 1 needs metadata.version 4.0-IV1). The first failing
 * feature fails the whole request with INVALID_UPDATE_VERSION; otherwise
 * one FeatureLevelRecord per feature is written, atomically, unless
 * validateOnly.
 *
 * kraft.version is Raft's, not a FeatureLevelRecord: an update to the level
 * the quorum already runs writes a NoOpRecord, as Kafka; an upgrade 0→1 is
 * refused (Spool's Raft cannot yet turn static voters into a voter set).
 */
import { ErrorCode } from '../protocol/errors.js';
import { metadataRecord, type MetadataRecord } from '../metadata/records.js';
import { ELR_FEATURE, METADATA_VERSION_4_0_IV1, METADATA_VERSION_MIN, SUPPORTED_FEATURES } from '../metadata/features.js';
import type { ControllerContext } from './context.js';
import { result, type ApiError, type ControllerResult } from './result.js';

/** Kafka's FeatureUpdate.UpgradeType codes (UpdateFeatures v1+). */
export const UpgradeType = { UPGRADE: 1, SAFE_DOWNGRADE: 2, UNSAFE_DOWNGRADE: 3 } as const;

export interface FeatureUpdate {
  feature: string;
  maxVersionLevel: number;
  upgradeType: number;
}

/** What the controller knows of its quorum that the metadata image does not hold. */
export interface QuorumFeatureState {
  /** kraft.version as Raft's log has it. */
  kraftVersion: number;
  /** The voters' ids: each must have registered (KIP-919) for a feature to change. */
  voterIds: readonly number[];
}

type Range = { minVersion: number; maxVersion: number };
const DISABLED: Range = { minVersion: 0, maxVersion: 0 };

/**
 * Kafka's MetadataVersion didMetadataChange, by level from 3.3-IV3 (7) to 4.0-IV3 (25): a downgrade across a level
 * that changed the metadata format could lose information, so Kafka refuses it.
 */
const METADATA_CHANGED = new Set([7, 8, 11, 13, 14, 15, 17, 23]);

/** Kafka's Feature dependencies for the features Spool supports beyond metadata.version. */
const DEPENDENCIES: ReadonlyMap<string, ReadonlyMap<number, Readonly<Record<string, number>>>> = new Map([
  [ELR_FEATURE, new Map([[1, { 'metadata.version': METADATA_VERSION_4_0_IV1 }]])],
]);

const LOCAL_SUPPORT: ReadonlyMap<string, Range> = new Map(SUPPORTED_FEATURES.map((f) => [f.name, { minVersion: f.minVersion, maxVersion: f.maxVersion }]));

export function updateFeatures(
  context: ControllerContext,
  quorum: QuorumFeatureState,
  updates: readonly FeatureUpdate[],
  options: { validateOnly: boolean },
): ControllerResult<ApiError> {
  // Kafka collects the updates in a map: a feature named twice takes its last level and type.
  const byName = new Map(updates.map((u) => [u.feature, u]));
  const proposed = new Map(context.image.features);
  for (const update of byName.values()) proposed.set(update.feature, update.maxVersionLevel);
  const records: MetadataRecord[] = [];
  for (const update of byName.values()) {
    const error = updateFeature(context, quorum, update, proposed, records);
    if (error !== null) return result([], error);
  }
  return result(options.validateOnly ? [] : records, { errorCode: ErrorCode.NONE, errorMessage: null });
}

function updateFeature(
  context: ControllerContext,
  quorum: QuorumFeatureState,
  { feature, maxVersionLevel: level, upgradeType }: FeatureUpdate,
  proposed: ReadonlyMap<string, number>,
  records: MetadataRecord[],
): ApiError | null {
  if (upgradeType < UpgradeType.UPGRADE || upgradeType > UpgradeType.UNSAFE_DOWNGRADE) {
    return invalidUpdateVersion(feature, level, 'The controller does not support the given upgrade type.');
  }
  const current = feature === 'kraft.version' ? quorum.kraftVersion : (context.image.features.get(feature) ?? 0);
  if (level < 0) return invalidUpdateVersion(feature, level, 'A feature version cannot be less than 0.');
  const unsupported = reasonNotSupported(context, quorum, feature, level);
  if (unsupported !== null) return invalidUpdateVersion(feature, level, unsupported);
  if (level < current && upgradeType === UpgradeType.UPGRADE) {
    return invalidUpdateVersion(feature, level, "Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade.");
  }
  if (level > current && upgradeType !== UpgradeType.UPGRADE) return invalidUpdateVersion(feature, level, "Can't downgrade to a newer version.");
  if (feature === 'metadata.version') return updateMetadataVersion(current, level, upgradeType, records);
  if (feature === 'kraft.version') return updateKraftVersion(current, level, upgradeType, records);
  const dependency = unmetDependency(feature, level, proposed);
  if (dependency !== null) return invalidUpdateVersion(feature, level, dependency);
  records.push(metadataRecord('FeatureLevelRecord', { name: feature, featureLevel: level }));
  return null;
}

/** Kafka's reasonNotSupported: this controller, then each broker, then each other voter's registration. */
function reasonNotSupported(context: ControllerContext, quorum: QuorumFeatureState, feature: string, level: number): string | null {
  const local = outOfRange(level, `Local controller ${context.nodeId}`, LOCAL_SUPPORT.get(feature) ?? DISABLED);
  if (local !== null) return local;
  for (const broker of context.image.brokers.values()) {
    const reason = outOfRange(level, `Broker ${broker.id}`, broker.supportedFeatures.get(feature) ?? DISABLED);
    if (reason !== null) return reason;
  }
  for (const controller of context.image.controllers.values()) {
    if (controller.id === context.nodeId) continue;
    const reason = outOfRange(level, `Controller ${controller.id}`, controller.supportedFeatures.get(feature) ?? DISABLED);
    if (reason !== null) return reason;
  }
  const unregistered = quorum.voterIds.find((id) => id !== context.nodeId && !context.image.controllers.has(id));
  return unregistered === undefined ? null : `controller ${unregistered} has not registered, and may not support this feature`;
}

/** Kafka's QuorumFeatures.reasonNotSupported, with VersionRange's text (`0-2`, or `1` for one version). */
function outOfRange(level: number, who: string, range: Range): string | null {
  if (level >= range.minVersion && level <= range.maxVersion) return null;
  if (range.maxVersion === 0) return `${who} does not support this feature.`;
  const versions = range.minVersion === range.maxVersion ? `${range.minVersion}` : `${range.minVersion}-${range.maxVersion}`;
  return `${who} only supports versions ${versions}`;
}

function updateMetadataVersion(current: number, level: number, upgradeType: number, records: MetadataRecord[]): ApiError | null {
  if (level < current && metadataChangedBetween(level, current)) {
    const reason =
      upgradeType === UpgradeType.UNSAFE_DOWNGRADE
        ? 'Unsafe metadata downgrade is not supported in this version.'
        : 'Refusing to perform the requested downgrade because it might delete metadata information.';
    return { errorCode: ErrorCode.INVALID_UPDATE_VERSION, errorMessage: `Unsupported metadata.version downgrade from ${current} to ${level}. ${reason}` };
  }
  records.push(metadataRecord('FeatureLevelRecord', { name: 'metadata.version', featureLevel: level }));
  return null;
}

/** True when a level in (low, high] changed the metadata format. */
function metadataChangedBetween(low: number, high: number): boolean {
  for (let level = Math.max(low + 1, METADATA_VERSION_MIN); level <= high; level++) if (METADATA_CHANGED.has(level)) return true;
  return false;
}

function updateKraftVersion(current: number, level: number, upgradeType: number, records: MetadataRecord[]): ApiError | null {
  if (upgradeType !== UpgradeType.UPGRADE) {
    return level === current ? null : invalidUpdateVersion('kraft.version', level, "Can't downgrade the version of this feature.");
  }
  if (level !== current) {
    return invalidUpdateVersion('kraft.version', level, 'Spool cannot upgrade kraft.version; format the controllers with --standalone or --initial-controllers for kraft.version 1.');
  }
  records.push(metadataRecord('NoOpRecord', {}));
  return null;
}

/** Kafka's Feature.validateVersion against the levels the request would leave finalized. */
function unmetDependency(feature: string, level: number, proposed: ReadonlyMap<string, number>): string | null {
  const metadataVersion = proposed.get('metadata.version');
  if (level >= 1 && (metadataVersion === undefined || metadataVersion < METADATA_VERSION_MIN)) {
    return `${feature} could not be set to ${level} because it depends on metadata.version=${METADATA_VERSION_MIN} (3.3-IV3)`;
  }
  for (const [name, needed] of Object.entries(DEPENDENCIES.get(feature)?.get(level) ?? {})) {
    if ((proposed.get(name) ?? -1) < needed) return `${feature} could not be set to ${level} because it depends on ${name} level ${needed}`;
  }
  return null;
}

function invalidUpdateVersion(feature: string, level: number, message: string): ApiError {
  return { errorCode: ErrorCode.INVALID_UPDATE_VERSION, errorMessage: `Invalid update version ${level} for feature ${feature}. ${message}` };
}
