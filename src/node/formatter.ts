/**
 * Formatting log directories, as Kafka 4.4's Formatter (kafka-storage.sh
 * format) does: every directory of log.dirs and metadata.log.dir gets a
 * meta.properties (version 1, cluster.id, node.id, a fresh directory.id);
 * the metadata log directory also gets the bootstrap snapshot
 * `__cluster_metadata-0/00000000000000000000-0000000000.checkpoint`:
 *
 *   control batch  SnapshotHeader, and for a dynamic quorum (KIP-853)
 *                  KRaftVersion 1 and, with --standalone or
 *                  --initial-controllers, the initial Voters
 *   data batch     a FeatureLevelRecord per finalized feature, offsets
 *                  following the control records
 *   control batch  SnapshotFooter
 *
 * all with leader epoch 0. The first active controller replays it before
 * anything else, so a new cluster starts at the formatted features.
 *
 * The features: metadata.version from --release-version (default Spool's
 * latest), transaction.version at Kafka's default for that metadata.version
 * (2 from 4.0-IV2), and --feature overrides for the features Spool
 * implements (eligible.leader.replicas.version stays 0 unless set: Kafka
 * starts it at 1 only from 4.1-IV0, beyond Spool's latest level), share.version
 * 1 (KIP-932 share groups; `--feature share.version=0` leaves them off). Kafka's
 * other features (group.version, ...) are not finalized.
 */
import { posix } from 'node:path';
import type { BrokerConfig } from '../common/config.js';
import { parseListeners } from '../common/config.js';
import type { Env } from '../io/env.js';
import {
  ELR_FEATURE,
  METADATA_VERSION_4_0_IV1,
  METADATA_VERSION_LATEST,
  METADATA_VERSION_MIN,
  SUPPORTED_METADATA_VERSIONS,
  SHARE_VERSION_FEATURE,
  SHARE_VERSION_LATEST,
  TRANSACTION_VERSION_FEATURE,
  defaultShareVersion,
  defaultTransactionVersion,
} from '../metadata/features.js';
import { readMetaProperties, randomUuid, writeMetaProperties } from '../metadata/meta-properties.js';
import { encodeMetadataRecord, metadataRecord } from '../metadata/records.js';
import { buildBatch } from '../protocol/records/records.js';
import { buildRaftControlBatch, type RaftControlRecord } from '../raft/control-records.js';
import { snapshotFileName } from '../raft/snapshot.js';
import { describeScramRecord, parseScramArguments, ScramArgumentError, type ScramCredentialRecord } from '../security/scram-arguments.js';
import { validateKRaftConfig } from './kraft-config.js';

const METADATA_VERSIONS = SUPPORTED_METADATA_VERSIONS;
/** Features `--feature` may set, with the levels Spool implements (metadata.version is set by level too). */
const FORMATTABLE_FEATURES: ReadonlyMap<string, { min: number; max: number }> = new Map([
  ['kraft.version', { min: 0, max: 1 }],
  ['metadata.version', { min: METADATA_VERSION_MIN, max: METADATA_VERSION_LATEST }],
  [TRANSACTION_VERSION_FEATURE, { min: 0, max: 2 }],
  [ELR_FEATURE, { min: 0, max: 1 }],
  [SHARE_VERSION_FEATURE, { min: 0, max: SHARE_VERSION_LATEST }],
]);
const METADATA_PARTITION_DIR = '__cluster_metadata-0';
const BOOTSTRAP_SNAPSHOT_ID = { offset: 0, epoch: 0 };
/** The first metadata.version with SCRAM credentials in the metadata log. */
const METADATA_VERSION_3_5_IV2 = METADATA_VERSIONS.indexOf('3.5-IV2') + METADATA_VERSION_MIN;

export class FormatterError extends Error {
  override readonly name = 'FormatterError';
}

export interface InitialController {
  id: number;
  host: string;
  port: number;
  directoryId: string;
}

/** How the first voters are set (KIP-853); `static` when controller.quorum.voters lists them. */
export type InitialVoters = { kind: 'static' } | { kind: 'standalone' } | { kind: 'none' } | { kind: 'initial'; controllers: readonly InitialController[] };

export interface FormatOptions {
  clusterId: string;
  /** `--release-version`: a metadata.version name (`4.0-IV3`) or a release (`4.0`, its latest level). */
  releaseVersion?: string;
  /** `--feature name=level`. */
  features?: ReadonlyMap<string, number>;
  initialVoters: InitialVoters;
  ignoreFormatted: boolean;
  /** `--add-scram` arguments (src/security/scram-arguments.ts), each a UserScramCredentialRecord after the features. */
  scram?: readonly string[];
}

/** The level of a `--release-version` text, with Kafka's message for an unknown one. */
export function metadataVersionLevel(text: string): number {
  const exact = METADATA_VERSIONS.indexOf(text);
  if (exact >= 0) return METADATA_VERSION_MIN + exact;
  const ofRelease = METADATA_VERSIONS.filter((name) => name.startsWith(`${text}-`));
  if (ofRelease.length > 0) return METADATA_VERSION_MIN + METADATA_VERSIONS.indexOf(ofRelease[ofRelease.length - 1]!);
  throw new FormatterError(`Unknown metadata.version '${text}'. Supported metadata.version are: ${METADATA_VERSIONS.join(', ')}`);
}

export function metadataVersionName(level: number): string {
  return METADATA_VERSIONS[level - METADATA_VERSION_MIN] ?? String(level);
}

/** Parses `--initial-controllers`: `id@host:port:directoryId`, comma-separated. */
export function parseInitialControllers(text: string): InitialController[] {
  return text.split(',').map((entry) => {
    const match = /^(\d+)@(\[[^\]]+\]|[^:]+):(\d+):([A-Za-z0-9_-]{22})$/.exec(entry.trim());
    if (match === null) throw new FormatterError(`Unable to parse controller entry ${entry.trim()}: expected id@hostname:port:directory.id`);
    return { id: Number(match[1]), host: match[2]!.replace(/^\[|\]$/g, ''), port: Number(match[3]), directoryId: match[4]! };
  });
}

/** The finalized feature levels a new cluster starts with. */
export function bootstrapFeatures(options: Pick<FormatOptions, 'releaseVersion' | 'features' | 'initialVoters'>): Map<string, number> {
  const metadataVersion = options.releaseVersion === undefined ? METADATA_VERSION_LATEST : metadataVersionLevel(options.releaseVersion);
  const levels = new Map<string, number>([
    ['metadata.version', metadataVersion],
    ['kraft.version', options.initialVoters.kind === 'static' ? 0 : 1],
    [TRANSACTION_VERSION_FEATURE, defaultTransactionVersion(metadataVersion)],
    [SHARE_VERSION_FEATURE, defaultShareVersion()],
  ]);
  for (const [name, level] of options.features ?? []) {
    const range = FORMATTABLE_FEATURES.get(name);
    if (range === undefined) {
      const supported = [...FORMATTABLE_FEATURES.keys()].filter((feature) => feature !== 'metadata.version');
      throw new FormatterError(`Unsupported feature: ${name}. Supported features are: ${supported.join(', ')}`);
    }
    if (level < range.min || level > range.max) throw new FormatterError(`Unsupported value ${level} for ${name}: Spool supports levels ${range.min} to ${range.max}`);
    levels.set(name, level);
  }
  if ((levels.get(ELR_FEATURE) ?? 0) > 0 && metadataVersion < METADATA_VERSION_4_0_IV1) {
    // Kafka's FeatureVersion dependencies: ELR needs metadata.version 4.0-IV1.
    throw new FormatterError(
      `Invalid feature level ${levels.get(ELR_FEATURE)} for ${ELR_FEATURE}: it depends on metadata.version ${metadataVersionName(METADATA_VERSION_4_0_IV1)} or later, not ${metadataVersionName(metadataVersion)}.`,
    );
  }
  return levels;
}

/**
 * The bootstrap snapshot's bytes. `timestampMs` stamps the batches and the
 * header's lastContainedLogTimestamp; `voters` are written for a dynamic
 * quorum with initial voters.
 */
export function bootstrapSnapshot(options: {
  features: ReadonlyMap<string, number>;
  voters: readonly { id: number; directoryId: string; listenerName: string; host: string; port: number }[] | null;
  timestampMs: number;
  scram?: readonly ScramCredentialRecord[];
}): Buffer {
  const { timestampMs } = options;
  const kraftVersion = options.features.get('kraft.version') ?? 0;
  const control: RaftControlRecord[] = [{ type: 'SNAPSHOT_HEADER', data: { version: 0, lastContainedLogTimestamp: timestampMs } }];
  if (kraftVersion > 0) control.push({ type: 'KRAFT_VERSION', data: { version: 0, kRaftVersion: kraftVersion } });
  if (kraftVersion > 0 && options.voters !== null) {
    const voters = options.voters.map((voter) => ({
      voterId: voter.id,
      voterDirectoryId: voter.directoryId,
      endpoints: [{ name: voter.listenerName, host: voter.host, port: voter.port }],
      kRaftVersionFeature: { minSupportedVersion: 0, maxSupportedVersion: 1 },
    }));
    control.push({ type: 'KRAFT_VOTERS', data: { version: 0, voters } });
  }
  // Feature records in Kafka's order: metadata.version first, the rest by name; kraft.version lives in the control records.
  const records = [...options.features]
    .filter(([name, level]) => name !== 'kraft.version' && level > 0)
    .sort(([a], [b]) => (a === 'metadata.version' ? -1 : b === 'metadata.version' ? 1 : a.localeCompare(b)))
    .map(([name, featureLevel]) => encodeMetadataRecord(metadataRecord('FeatureLevelRecord', { name, featureLevel })));
  for (const credential of options.scram ?? []) records.push(encodeMetadataRecord(metadataRecord('UserScramCredentialRecord', credential)));
  const epoch = BOOTSTRAP_SNAPSHOT_ID.epoch;
  const footerOffset = control.length + records.length;
  return Buffer.concat([
    buildRaftControlBatch(control, { baseOffset: 0, epoch, timestampMs }),
    buildBatch({ records: records.map((value) => ({ key: null, value, timestamp: timestampMs })), baseOffset: control.length, partitionLeaderEpoch: epoch }),
    buildRaftControlBatch([{ type: 'SNAPSHOT_FOOTER', data: { version: 0 } }], { baseOffset: footerOffset, epoch, timestampMs }),
  ]);
}

/** Kafka's Formatter directory kinds, as its messages name them. */
function directoryDescription(dir: string, metadataDir: string, voter: boolean, dynamic: boolean): string {
  if (dir !== metadataDir) return 'data directory';
  if (!dynamic) return 'metadata directory';
  return voter ? 'dynamic metadata voter directory' : 'dynamic metadata directory';
}

/** Kafka's BootstrapMetadata.toString, which kafka-storage.sh format prints first. */
function describeBootstrap(features: ReadonlyMap<string, number>, metadataVersion: number, scram: readonly ScramCredentialRecord[]): string {
  const records = [...features]
    .filter(([name, level]) => name !== 'kraft.version' && level > 0)
    .sort(([a], [b]) => (a === 'metadata.version' ? -1 : b === 'metadata.version' ? 1 : a.localeCompare(b)))
    .map(([name, level]) => `FeatureLevelRecord(name='${name}', featureLevel=${level})`)
    .concat(scram.map(describeScramRecord))
    .map((record) => `ApiMessageAndVersion(${record} at version 0)`);
  return `Bootstrap metadata: BootstrapMetadata(records=[${records.join(', ')}], metadataVersionLevel=${metadataVersion}, source=format command)`;
}

/** The checks Kafka's StorageTool makes of the quorum options against the config. */
function checkInitialVoters(config: BrokerConfig, initialVoters: InitialVoters, isController: boolean): void {
  const staticVoters = config.list('controller.quorum.voters').length > 0;
  if (staticVoters && (initialVoters.kind === 'standalone' || initialVoters.kind === 'initial')) {
    throw new FormatterError(
      'You cannot specify controller.quorum.voters and format the node with --initial-controllers or --standalone. If you want to use dynamic quorum, please remove controller.quorum.voters and specify controller.quorum.bootstrap.servers instead.',
    );
  }
  if (isController && !staticVoters && initialVoters.kind === 'static') {
    throw new FormatterError('Because controller.quorum.voters is not set on this controller, you must specify one of the following: --standalone, --initial-controllers, or --no-initial-controllers.');
  }
}

/** This node as the one initial voter of --standalone: its first controller listener, advertised. */
function standaloneVoter(config: BrokerConfig, nodeId: number, listenerName: string): Omit<InitialController, 'directoryId'> {
  const advertised = parseListeners(config.list('advertised.listeners')).find((l) => l.name === listenerName);
  const listener = advertised ?? parseListeners(config.list('listeners')).find((l) => l.name === listenerName);
  if (listener === undefined) throw new FormatterError(`--standalone: no listener named ${listenerName} in listeners`);
  return { id: nodeId, host: listener.host, port: listener.port };
}

/**
 * Formats the node's log directories (kafka-storage.sh format); resolves
 * with the lines the tool prints. Throws FormatterError or ConfigError.
 */
export async function formatStorage(env: Env, config: BrokerConfig, options: FormatOptions): Promise<string[]> {
  const kraft = validateKRaftConfig(config);
  const nodeId = config.int('node.id');
  checkInitialVoters(config, options.initialVoters, kraft.roles.has('controller'));
  if (options.features?.has('metadata.version') === true && options.releaseVersion !== undefined) {
    throw new FormatterError('Use --release-version instead of --feature metadata.version=X to avoid ambiguity.');
  }
  const features = bootstrapFeatures(options);
  const metadataVersion = features.get('metadata.version')!;
  const scram = scramRecords(options.scram ?? [], metadataVersion, env);
  const metadataDir = config.string('metadata.log.dir') ?? config.logDirs[0]!;
  const dirs = [...new Set([...config.logDirs, metadataDir])];
  const formatted: string[] = [];
  for (const dir of dirs) if ((await readMetaProperties(env.fs, dir)) !== null) formatted.push(dir);
  if (formatted.length > 0 && !options.ignoreFormatted) {
    throw new FormatterError(`Log directory ${formatted[0]} is already formatted. Use --ignore-formatted to ignore this directory and format the others.`);
  }
  const lines = [describeBootstrap(features, metadataVersion, scram)];
  const empty = dirs.filter((dir) => !formatted.includes(dir));
  if (empty.length === 0) return [...lines, 'All of the log directories are already formatted.'];
  const listenerName = config.list('controller.listener.names')[0] ?? 'CONTROLLER';
  const initial = initialControllers(config, nodeId, listenerName, options.initialVoters, env);
  const self = initial?.find((voter) => voter.id === nodeId);
  for (const dir of empty) {
    const description = directoryDescription(dir, metadataDir, self !== undefined, initial !== null);
    lines.push(`Formatting ${description} ${dir} with metadata.version ${metadataVersionName(metadataVersion)}.`);
    await env.fs.mkdir(dir);
    if (dir === metadataDir) await writeBootstrapSnapshot(env, dir, { features, voters: initial, listenerName, scram });
    const directoryId = dir === metadataDir && self !== undefined ? self.directoryId : randomUuid(env.random);
    await writeMetaProperties(env.fs, dir, { version: 1, clusterId: options.clusterId, nodeId, directoryId }, env.clock.nowMs());
  }
  return lines;
}

/** The `--add-scram` credentials; SCRAM records exist from metadata.version 3.5-IV2 (Kafka's check). */
function scramRecords(args: readonly string[], metadataVersion: number, env: Env): ScramCredentialRecord[] {
  if (args.length === 0) return [];
  if (metadataVersion < METADATA_VERSION_3_5_IV2) {
    throw new FormatterError(`SCRAM is only supported in metadata.version ${metadataVersionName(METADATA_VERSION_3_5_IV2)} or later.`);
  }
  try {
    return parseScramArguments(args, env.random);
  } catch (error) {
    if (error instanceof ScramArgumentError) throw new FormatterError(error.message);
    throw error;
  }
}

function initialControllers(config: BrokerConfig, nodeId: number, listenerName: string, initialVoters: InitialVoters, env: Env): InitialController[] | null {
  if (initialVoters.kind === 'standalone') return [{ ...standaloneVoter(config, nodeId, listenerName), directoryId: randomUuid(env.random) }];
  if (initialVoters.kind === 'initial') return [...initialVoters.controllers];
  return null;
}

async function writeBootstrapSnapshot(
  env: Env,
  dir: string,
  options: { features: ReadonlyMap<string, number>; voters: readonly InitialController[] | null; listenerName: string; scram: readonly ScramCredentialRecord[] },
): Promise<void> {
  const partitionDir = posix.join(dir, METADATA_PARTITION_DIR);
  await env.fs.mkdir(partitionDir);
  const voters = options.voters?.map((voter) => ({ ...voter, listenerName: options.listenerName })) ?? null;
  const bytes = bootstrapSnapshot({ features: options.features, voters, timestampMs: env.clock.nowMs(), scram: options.scram });
  await env.fs.writeFileAtomic(posix.join(partitionDir, snapshotFileName(BOOTSTRAP_SNAPSHOT_ID)), bytes);
  await env.fs.syncDir(partitionDir);
}
