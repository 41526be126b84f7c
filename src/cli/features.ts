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
 *
 * `upgrade|downgrade --feature name=level... [--metadata VERSION] [--dry-run]`
 * (downgrade also `--unsafe`) and `disable --feature name...` send one
 * UpdateFeatures, as FeatureCommand through Admin.updateFeatures, and print
 * a line per feature, sorted by name ("group.version was upgraded to 1.",
 * "... can be ..." with --dry-run, "Could not ... . <error>" when refused);
 * any failure ends with "N out of M operation(s) failed." and exit code 1.
 * Not done: --release-version, version-mapping and feature-dependencies
 * (docs/SKIPPED.md).
 */
import type { Command } from 'commander';
import { ApiVersions } from '../protocol/schemas/18-api-versions.js';
import { ErrorCode } from '../protocol/errors.js';
import { KafkaError } from '../client/errors.js';
import { CLIENT_SOFTWARE_NAME, CLIENT_SOFTWARE_VERSION } from '../client/connection.js';
import type { ResponseOf } from '../protocol/schema.js';
import { metadataVersionName } from '../metadata/features.js';
import { UpdateFeatures } from '../protocol/schemas/57-update-features.js';
import { UpgradeType } from '../controller/feature-control.js';
import { CliError, collect, type CliIo } from './io.js';
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
  for (const op of ['upgrade', 'downgrade', 'disable'] as const) registerUpdate(features, io, op);
}

type UpdateOp = 'upgrade' | 'downgrade' | 'disable';
interface UpdateFlags extends BootstrapFlags {
  feature: string[];
  metadata?: string;
  dryRun?: boolean;
  unsafe?: boolean;
}

const DESCRIPTIONS: Record<UpdateOp, string> = {
  upgrade: 'Upgrade one or more feature flags.',
  downgrade: 'Downgrade one or more feature flags.',
  disable: 'Disable one or more feature flags. This is the same as downgrading the version to zero.',
};

function registerUpdate(features: Command, io: CliIo, op: UpdateOp): void {
  const command = bootstrapOptions(features.command(op).description(DESCRIPTIONS[op]))
    .option('--feature <feature>', op === 'disable' ? 'A feature flag to disable.' : `A feature ${op} we should perform, in feature=level format.`, collect, [])
    .option('--dry-run', `Validate this ${op}, but do not perform it.`);
  if (op !== 'disable') command.option('--metadata <version>', `DEPRECATED -- The level to which we should ${op} the metadata. For example, 3.3-IV3.`);
  if (op !== 'upgrade') command.option('--unsafe', 'Perform this downgrade even if it may irreversibly destroy metadata.');
  command.action(async (_flags: UpdateFlags, self: Command) => {
    const flags = self.optsWithGlobals<UpdateFlags>();
    const upgradeType = op === 'upgrade' ? UpgradeType.UPGRADE : flags.unsafe === true ? UpgradeType.UNSAFE_DOWNGRADE : UpgradeType.SAFE_DOWNGRADE;
    const updates = requestedLevels(op, flags, io);
    if (updates.size === 0) throw new CliError(`You must specify at least one feature to ${op}`);
    const connection = await connectToBootstrap(flags, io, 'spool-features');
    try {
      const response = await connection.send(UpdateFeatures, {
        timeoutMs: 30_000,
        featureUpdates: [...updates].map(([feature, maxVersionLevel]) => ({ feature, maxVersionLevel, allowDowngrade: upgradeType !== UpgradeType.UPGRADE, upgradeType })),
        validateOnly: flags.dryRun === true,
      });
      reportUpdates(io, op, updates, response, flags.dryRun === true);
    } finally {
      await connection.close();
    }
  });
}

/** The levels asked for, by feature; each feature once, as FeatureCommand insists. */
function requestedLevels(op: UpdateOp, flags: UpdateFlags, io: CliIo): Map<string, number> {
  const updates = new Map<string, number>();
  if (flags.metadata !== undefined) {
    io.stdout(' `metadata` flag is deprecated and may be removed in a future release.\n');
    updates.set('metadata.version', metadataVersionLevel(flags.metadata));
  }
  for (const entry of flags.feature) {
    const [name, level] = op === 'disable' ? [entry, 0] : parseNameAndLevel(entry);
    if (updates.has(name)) throw new CliError(`Feature ${name} was specified more than once.`);
    updates.set(name, level);
  }
  return updates;
}

function parseNameAndLevel(entry: string): [string, number] {
  const equals = entry.indexOf('=');
  if (equals < 0) throw new CliError(`Can't parse feature=level string ${entry}: equals sign not found.`);
  const text = entry.slice(equals + 1).trim();
  const level = Number(text);
  if (text === '' || !Number.isInteger(level) || level < -32768 || level > 32767) {
    throw new CliError(`Can't parse feature=level string ${entry}: unable to parse ${text} as a short.`);
  }
  return [entry.slice(0, equals).trim(), level];
}

/** `4.0-IV3`, or `4.0` for that release's last level, as MetadataVersion.fromVersionString. */
function metadataVersionLevel(version: string): number {
  let found: number | null = null;
  for (let level = 0; metadataVersionName(level) !== null || level < 7; level++) {
    const name = metadataVersionName(level);
    if (name === version || name?.startsWith(`${version}-`) === true) found = level;
  }
  if (found === null) throw new CliError(`Unknown metadata.version '${version}'.`);
  return found;
}

/** FeatureCommand.update's lines: every feature shares the request's one outcome. */
function reportUpdates(io: CliIo, op: UpdateOp, updates: ReadonlyMap<string, number>, response: ResponseOf<typeof UpdateFeatures>, dryRun: boolean): void {
  const failure = response.errorCode === ErrorCode.NONE ? null : (response.errorMessage ?? new KafkaError(response.errorCode).message);
  for (const name of [...updates.keys()].sort()) {
    const level = updates.get(name)!;
    const target = op === 'disable' ? `disable ${name}` : `${op} ${name} to ${level}`;
    if (failure !== null) io.stdout(`${dryRun ? 'Can not' : 'Could not'} ${target}. ${failure}\n`);
    else io.stdout(`${name}${dryRun ? ' can be ' : ' was '}${op === 'disable' ? 'disabled.' : `${op}d to ${level}.`}\n`);
  }
  if (failure !== null) throw new CliError(`${updates.size} out of ${updates.size} operation(s) failed.`);
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
