/**
 * Feature flags (KIP-584) this node supports, as ApiVersions advertises them
 * and the controller finalizes them (FeatureLevelRecord).
 *
 * metadata.version levels follow Kafka's MetadataVersion numbering; Spool
 * finalizes the level it was built against on a new cluster.
 * transaction.version: 1 writes flexible `__transaction_state` values, 2 is
 * Transactions V2 (KIP-890 part 2); a new cluster at metadata.version
 * 4.0-IV2 or later starts at 2, as Kafka's TransactionVersion.TV_2 does.
 * share.version: 1 is KIP-932 share groups (ShareGroupHeartbeat and the APIs
 * around it); a new Spool cluster starts at 1 (Kafka from 4.2-IV0).
 */
export interface SupportedFeature {
  name: string;
  minVersion: number;
  maxVersion: number;
}

/** metadata.version 3.3-IV3 (7) is the oldest a Kafka 4 node accepts; 4.0-IV3 is level 25. */
export const METADATA_VERSION_MIN = 7;
export const METADATA_VERSION_LATEST = 25;
/** metadata.version 4.0-IV2, from which Kafka's new clusters start at transaction.version 2. */
const METADATA_VERSION_4_0_IV2 = 24;

export const TRANSACTION_VERSION_FEATURE = 'transaction.version';

/**
 * share.version (KIP-932): level 1 enables share groups. Kafka's
 * ShareVersion depends on no metadata.version, so Spool's 4.0-IV3 carries
 * it; Spool finalizes 1 on a new cluster at any metadata.version, where
 * Kafka does so from 4.2-IV0 (see docs/SKIPPED.md).
 */
export const SHARE_VERSION_FEATURE = 'share.version';
export const SHARE_VERSION_LATEST = 1;

/** True when the finalized share.version serves share groups (Kafka's ShareVersion.supportsShareGroups). */
export function isShareGroupEnabled(features: ReadonlyMap<string, number>): boolean {
  return (features.get(SHARE_VERSION_FEATURE) ?? 0) >= 1;
}

/** The share.version a new cluster starts at. */
export function defaultShareVersion(): number {
  return SHARE_VERSION_LATEST;
}

/**
 * eligible.leader.replicas.version (KIP-966): 1 keeps eligible leader
 * replicas. Needs metadata.version 4.0-IV1 or later; Kafka's new clusters
 * start at 1 from 4.1-IV0, beyond Spool's latest level, so a Spool cluster
 * starts at 0 unless formatted with `--feature eligible.leader.replicas.version=1`.
 */
export const ELR_FEATURE = 'eligible.leader.replicas.version';
/** metadata.version 4.0-IV1, the first with eligible leader replicas (Kafka's isElrSupported). */
export const METADATA_VERSION_4_0_IV1 = 23;

/** True when the cluster keeps eligible leader replicas (Kafka's FeatureControlManager.isElrFeatureEnabled). */
export function isElrEnabled(features: ReadonlyMap<string, number>): boolean {
  return (features.get(ELR_FEATURE) ?? 0) >= 1 && (features.get('metadata.version') ?? 0) >= METADATA_VERSION_4_0_IV1;
}

/**
 * Kafka 4.4's metadata.version names by level (MetadataVersion), from 3.3-IV3
 * (7) to 4.5-IV0 (34, not yet production in 4.4): for naming the levels a
 * Kafka node reports. Spool supports up to METADATA_VERSION_LATEST.
 */
const METADATA_VERSION_NAMES: readonly string[] = [
  '3.3-IV3', '3.4-IV0', '3.5-IV0', '3.5-IV1', '3.5-IV2', '3.6-IV0', '3.6-IV1', '3.6-IV2', '3.7-IV0', '3.7-IV1',
  '3.7-IV2', '3.7-IV3', '3.7-IV4', '3.8-IV0', '3.9-IV0', '4.0-IV0', '4.0-IV1', '4.0-IV2', '4.0-IV3', '4.1-IV0',
  '4.1-IV1', '4.2-IV0', '4.2-IV1', '4.3-IV0', '4.4-IV0', '4.4-IV1', '4.4-IV2', '4.5-IV0',
];

/** The names of the metadata.version levels Spool supports, oldest first. */
export const SUPPORTED_METADATA_VERSIONS: readonly string[] = METADATA_VERSION_NAMES.slice(0, METADATA_VERSION_LATEST - METADATA_VERSION_MIN + 1);

/** `4.0-IV3` for 25, as Kafka's MetadataVersion names a level; null for a level Kafka 4.4 does not know. */
export function metadataVersionName(level: number): string | null {
  return level >= METADATA_VERSION_MIN ? (METADATA_VERSION_NAMES[level - METADATA_VERSION_MIN] ?? null) : null;
}

export const SUPPORTED_FEATURES: readonly SupportedFeature[] = [
  { name: 'metadata.version', minVersion: METADATA_VERSION_MIN, maxVersion: METADATA_VERSION_LATEST },
  { name: 'kraft.version', minVersion: 0, maxVersion: 1 },
  // group.version 1 is the KIP-848 consumer protocol (ConsumerGroupHeartbeat), which Spool serves;
  // transaction.version 2 is Transactions V2 (KIP-890 part 2); eligible.leader.replicas.version 1
  // is KIP-966; share.version 1 is KIP-932 share groups. Kafka's streams.version is not
  // implemented, so a Kafka controller refuses a Spool broker in a cluster that finalized it, as it
  // refuses any broker without it.
  { name: 'group.version', minVersion: 0, maxVersion: 1 },
  { name: TRANSACTION_VERSION_FEATURE, minVersion: 0, maxVersion: 2 },
  { name: ELR_FEATURE, minVersion: 0, maxVersion: 1 },
  { name: SHARE_VERSION_FEATURE, minVersion: 0, maxVersion: SHARE_VERSION_LATEST },
];

/** The transaction.version a new cluster starts at (Kafka's defaultLevel for the metadata.version). */
export function defaultTransactionVersion(metadataVersion: number): number {
  return metadataVersion >= METADATA_VERSION_4_0_IV2 ? 2 : 0;
}

/** The supported ranges as BrokerRegistration and ControllerRegistration carry them. */
export function supportedFeatureRanges(): { name: string; minSupportedVersion: number; maxSupportedVersion: number }[] {
  return SUPPORTED_FEATURES.map((f) => ({ name: f.name, minSupportedVersion: f.minVersion, maxSupportedVersion: f.maxVersion }));
}
