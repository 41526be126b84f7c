/**
 * `meta.properties` in every log directory (and the metadata log
 * directory): which cluster and node the directory belongs to, and the
 * directory's own id (KIP-858). Kafka's format (a Java properties file):
 *
 *   #
 *   #Fri Nov 29 09:00:00 UTC 2024
 *   cluster.id=<22-char base64url uuid>
 *   directory.id=<22-char base64url uuid>
 *   node.id=1
 *   version=1
 *
 * Where Kafka needs `kafka-storage.sh format`, Spool formats on first start:
 * the cluster id comes from an existing directory, else the `cluster.id`
 * config, else is generated once. Directories that disagree on the cluster
 * or node id stop the node (Kafka's InconsistentClusterIdException): mixing
 * them up would merge two clusters' data.
 *
 * Crash policy: written atomically (temporary file, fsync, rename, directory
 * fsync); a directory without the file is simply formatted again.
 */
import { posix } from 'node:path';
import type { Clock } from '../io/clock.js';
import type { FileSystem } from '../io/fs.js';
import type { Random } from '../io/random.js';
import { ZERO_UUID } from '../protocol/reader.js';
import { parseProperties } from '../common/config.js';

export const META_PROPERTIES_FILE = 'meta.properties';

export interface MetaProperties {
  version: number;
  clusterId: string;
  nodeId: number;
  directoryId: string;
}

export class MetaPropertiesError extends Error {
  override readonly name = 'MetaPropertiesError';
}

/** Kafka's reserved directory ids (UNASSIGNED, LOST, MIGRATING) and the ids no directory may take. */
const RESERVED_DIRECTORY_IDS = new Set([ZERO_UUID, 'AAAAAAAAAAAAAAAAAAAAAQ', 'AAAAAAAAAAAAAAAAAAAAAg']);

export function randomUuid(random: Random): string {
  for (;;) {
    const id = random.uuid().toString('base64url');
    if (!RESERVED_DIRECTORY_IDS.has(id) && !id.startsWith('-')) return id;
  }
}

export function parseMetaProperties(text: string, path: string): MetaProperties {
  const props = parseProperties(text);
  const version = Number(props.get('version'));
  if (version !== 1) throw new MetaPropertiesError(`${path}: version ${props.get('version') ?? '(none)'} is not supported; KRaft needs version=1`);
  const clusterId = props.get('cluster.id');
  const nodeId = Number(props.get('node.id'));
  if (clusterId === undefined || clusterId === '') throw new MetaPropertiesError(`${path}: no cluster.id`);
  if (!Number.isInteger(nodeId)) throw new MetaPropertiesError(`${path}: node.id is not an integer`);
  return { version, clusterId, nodeId, directoryId: props.get('directory.id') ?? '' };
}

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** Java's Date.toString in UTC ("Fri Nov 29 09:00:00 UTC 2024"), as Properties.store writes it. */
export function javaDate(ms: number): string {
  const date = new Date(ms);
  const two = (n: number) => String(n).padStart(2, '0');
  const time = `${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())}`;
  return `${WEEKDAYS[date.getUTCDay()]} ${MONTHS[date.getUTCMonth()]} ${two(date.getUTCDate())} ${time} UTC ${date.getUTCFullYear()}`;
}

/** In the order Kafka's Properties.store writes these four keys (its hash-table order), so the file is byte-for-byte Kafka's. */
export function formatMetaProperties(meta: MetaProperties, nowMs: number): string {
  return [
    '#',
    `#${javaDate(nowMs)}`,
    `node.id=${meta.nodeId}`,
    `directory.id=${meta.directoryId}`,
    `version=${meta.version}`,
    `cluster.id=${meta.clusterId}`,
    '',
  ].join('\n');
}

export async function readMetaProperties(fs: FileSystem, dir: string): Promise<MetaProperties | null> {
  const path = posix.join(dir, META_PROPERTIES_FILE);
  if ((await fs.stat(path)) === null) return null;
  return parseMetaProperties((await fs.readFile(path)).toString('utf8'), path);
}

export async function writeMetaProperties(fs: FileSystem, dir: string, meta: MetaProperties, nowMs: number): Promise<void> {
  await fs.writeFileAtomic(posix.join(dir, META_PROPERTIES_FILE), Buffer.from(formatMetaProperties(meta, nowMs), 'utf8'));
  await fs.syncDir(dir);
}

export interface FormattedDirectories {
  clusterId: string;
  /** directory.id of each directory, by path. */
  directoryIds: Map<string, string>;
}

/**
 * Reads or writes meta.properties in each of `dirs` so that all agree on
 * the cluster and node id; returns the cluster id and directory ids.
 */
export async function ensureMetaProperties(
  env: { fs: FileSystem; clock: Clock; random: Random },
  options: { dirs: readonly string[]; nodeId: number; configuredClusterId: string | null },
): Promise<FormattedDirectories> {
  const found = new Map<string, MetaProperties | null>();
  for (const dir of options.dirs) {
    await env.fs.mkdir(dir);
    found.set(dir, await readMetaProperties(env.fs, dir));
  }
  const clusterIds = new Set([...found.values()].filter((m) => m !== null).map((m) => m!.clusterId));
  if (clusterIds.size > 1) throw new MetaPropertiesError(`log directories belong to different clusters: ${[...clusterIds].join(', ')}`);
  const existing = [...clusterIds][0] ?? null;
  if (existing !== null && options.configuredClusterId !== null && options.configuredClusterId !== existing) {
    throw new MetaPropertiesError(`The cluster id ${options.configuredClusterId} in cluster.id doesn't match the stored cluster id ${existing} in meta.properties`);
  }
  for (const [dir, meta] of found) {
    if (meta !== null && meta.nodeId !== options.nodeId) {
      throw new MetaPropertiesError(`Stored node id ${meta.nodeId} in ${dir} doesn't match the configured node.id ${options.nodeId}`);
    }
  }
  const clusterId = existing ?? options.configuredClusterId ?? randomUuid(env.random);
  const directoryIds = new Map<string, string>();
  for (const [dir, meta] of found) {
    const directoryId = meta !== null && meta.directoryId !== '' ? meta.directoryId : randomUuid(env.random);
    if (meta === null || meta.directoryId !== directoryId) {
      await writeMetaProperties(env.fs, dir, { version: 1, clusterId, nodeId: options.nodeId, directoryId }, env.clock.nowMs());
    }
    directoryIds.set(dir, directoryId);
  }
  return { clusterId, directoryIds };
}
