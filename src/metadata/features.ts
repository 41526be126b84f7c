/**
 * Feature flags (KIP-584) this node supports, as ApiVersions advertises them
 * and the controller finalizes them (FeatureLevelRecord).
 *
 * metadata.version levels follow Kafka's MetadataVersion numbering; Spool
 * finalizes the level it was built against on a new cluster.
 */
export interface SupportedFeature {
  name: string;
  minVersion: number;
  maxVersion: number;
}

/** metadata.version 3.3-IV3 (7) is the oldest a Kafka 4 node accepts; 4.0-IV3 is level 25. */
export const METADATA_VERSION_MIN = 7;
export const METADATA_VERSION_LATEST = 25;

export const SUPPORTED_FEATURES: readonly SupportedFeature[] = [
  { name: 'metadata.version', minVersion: METADATA_VERSION_MIN, maxVersion: METADATA_VERSION_LATEST },
  { name: 'kraft.version', minVersion: 0, maxVersion: 1 },
];

/** The supported ranges as BrokerRegistration and ControllerRegistration carry them. */
export function supportedFeatureRanges(): { name: string; minSupportedVersion: number; maxSupportedVersion: number }[] {
  return SUPPORTED_FEATURES.map((f) => ({ name: f.name, minSupportedVersion: f.minVersion, maxSupportedVersion: f.maxVersion }));
}
