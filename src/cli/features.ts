/**
 * `spool features describe`: kafka-features.sh describe. Asks one node
 * (a broker with --bootstrap-server, a controller with
 * --bootstrap-controller) for ApiVersions, as Kafka's Admin.describeFeatures
 * does, and prints each feature the node supports, sorted by name, in
 * FeatureCommand's layout:
 *
 *   Feature: <name padded to 40>  SupportedMinVersion: <15>  SupportedMaxVersion: <15>  FinalizedVersionLevel: <15>  Epoch: <epoch>
 *
 * metadata.version levels are printed by name (`4.0-IV3`, `UNKNOWN 40` for
 * a level Kafka 4.4 does not know); a feature the node supports but has not
 * finalized shows level 0; the epoch is `-` when the node reports none.
 * Not done: upgrade, downgrade, disable (UpdateFeatures), version-mapping
 * and feature-dependencies (docs/SKIPPED.md).
 */
import type { Command } from 'commander';
import { ApiVersions } from '../protocol/schemas/18-api-versions.js';
import { ErrorCode } from '../protocol/errors.js';
import { KafkaError } from '../client/errors.js';
import { CLIENT_SOFTWARE_NAME, CLIENT_SOFTWARE_VERSION } from '../client/connection.js';
import type { ResponseOf } from '../protocol/schema.js';
import { metadataVersionName } from '../metadata/features.js';
import type { CliIo } from './io.js';
import { bootstrapOptions, connectToBootstrap, type BootstrapFlags } from './bootstrap.js';

export function registerFeatures(program: Command, io: CliIo): void {
  const features = bootstrapOptions(program.command('features').description('Describe feature flags (like kafka-features.sh)'));
  bootstrapOptions(features.command('describe').description('Describes the current active feature flags.')).action(async (_flags: BootstrapFlags, command: Command) => {
    const flags = command.optsWithGlobals<BootstrapFlags>();
    const connection = await connectToBootstrap(flags, io, 'spool-features');
    try {
      const response = await connection.send(ApiVersions, { clientSoftwareName: CLIENT_SOFTWARE_NAME, clientSoftwareVersion: CLIENT_SOFTWARE_VERSION });
      if (response.errorCode !== ErrorCode.NONE) throw new KafkaError(response.errorCode);
      io.stdout(formatFeatures(response));
    } finally {
      await connection.close();
    }
  });
}

/** Java's `%-Ns`. */
function padded(text: string, width: number): string {
  return text.padEnd(width);
}

function levelText(feature: string, level: number): string {
  if (feature !== 'metadata.version') return String(level);
  return metadataVersionName(level) ?? `UNKNOWN ${level}`;
}

/** The lines FeatureCommand prints for an ApiVersions answer. */
export function formatFeatures(response: Pick<ResponseOf<typeof ApiVersions>, 'supportedFeatures' | 'finalizedFeatures' | 'finalizedFeaturesEpoch'>): string {
  const finalized = new Map(response.finalizedFeatures.map((feature) => [feature.name, feature.maxVersionLevel]));
  const epoch = response.finalizedFeaturesEpoch >= 0 ? String(response.finalizedFeaturesEpoch) : '-';
  const names = response.supportedFeatures.map((feature) => feature.name).sort();
  return names
    .map((name) => {
      const supported = response.supportedFeatures.find((feature) => feature.name === name)!;
      return (
        `Feature: ${padded(name, 40)}  SupportedMinVersion: ${padded(levelText(name, supported.minVersion), 15)}  ` +
        `SupportedMaxVersion: ${padded(levelText(name, supported.maxVersion), 15)}  ` +
        `FinalizedVersionLevel: ${padded(levelText(name, finalized.get(name) ?? 0), 15)}  Epoch: ${epoch}\n`
      );
    })
    .join('');
}
