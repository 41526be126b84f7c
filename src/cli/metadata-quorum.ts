/**
 * `spool metadata-quorum --bootstrap-server S | --bootstrap-controller C
 * describe --status | --replication [--human-readable]`:
 * kafka-metadata-quorum.sh. Asks DescribeQuorum of the active controller
 * (through a controller listener: DescribeCluster names it; through a broker
 * listener: the node asked) and prints Kafka's layout: the status block
 * (ClusterId, LeaderId, ..., CurrentVoters as `{"id": 1, "directoryId":
 * "...", "endpoints": ["CONTROLLER://host:port"]}`), or the replication
 * table (NodeId, DirectoryId, LogEndOffset, Lag, LastFetchTimestamp,
 * LastCaughtUpTimestamp, Status) padded as Kafka's ToolsUtils.prettyPrintTable.
 *
 * `add-controller [--dry-run]` with `--command-config` the new controller's
 * properties file (node.id, process.roles, metadata.log.dir or log.dirs,
 * controller.listener.names, listeners / advertised.listeners): its
 * directory id read from meta.properties, its advertised controller
 * endpoints, sent as AddRaftVoter to the active controller (KIP-853).
 * `remove-controller --controller-id ID --controller-directory-id DIR
 * [--dry-run]`: RemoveRaftVoter. Both print Kafka's lines and checks
 * (MetadataQuorumCommand).
 *
 * Not done: --command-config's client settings (security) are not applied
 * to the connection; only its controller settings are read.
 */
import type { Command } from 'commander';
import { BrokerConnection } from '../client/connection.js';
import { KafkaError } from '../client/errors.js';
import { ErrorCode } from '../protocol/errors.js';
import type { ResponseOf } from '../protocol/schema.js';
import { DescribeQuorum } from '../protocol/schemas/55-describe-quorum.js';
import { DescribeCluster } from '../protocol/schemas/60-describe-cluster.js';
import { AddRaftVoter } from '../protocol/schemas/80-add-raft-voter.js';
import { RemoveRaftVoter } from '../protocol/schemas/81-remove-raft-voter.js';
import { parseListeners, parseProperties } from '../common/config.js';
import { readMetaProperties } from '../metadata/meta-properties.js';
import { CliError, DEFAULT_BOOTSTRAP_SERVER, prettyPrintTable, splitConfigList, type CliIo } from './io.js';

type QuorumPartition = ResponseOf<typeof DescribeQuorum>['topics'][number]['partitions'][number];
type ReplicaState = QuorumPartition['currentVoters'][number];
type QuorumNodes = ResponseOf<typeof DescribeQuorum>['nodes'];

const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';
const UUID_PATTERN = /^[A-Za-z0-9_-]{22}$/;
/** Kafka's Admin default.api.timeout.ms, the TimeoutMs its addRaftVoter sends. */
const ADD_VOTER_TIMEOUT_MS = 60_000;
const CONTROLLER_ENDPOINTS = 2;

export interface QuorumDescription {
  clusterId: string;
  partition: QuorumPartition;
  nodes: QuorumNodes;
}

/** The --status block, as MetadataQuorumCommand.handleDescribeStatus prints it. */
export function formatQuorumStatus(quorum: QuorumDescription): string {
  const { partition } = quorum;
  const leader = leaderState(partition);
  const maxLagFollower = partition.currentVoters.reduce((min, voter) => (voter.logEndOffset < min.logEndOffset ? voter : min));
  const maxFollowerLag = leader.logEndOffset - maxLagFollower.logEndOffset;
  let maxFollowerLagTimeMs = -1;
  if (leader === maxLagFollower) maxFollowerLagTimeMs = 0;
  else if (leader.lastCaughtUpTimestamp >= 0 && maxLagFollower.lastCaughtUpTimestamp >= 0) maxFollowerLagTimeMs = leader.lastCaughtUpTimestamp - maxLagFollower.lastCaughtUpTimestamp;
  return [
    `ClusterId:              ${quorum.clusterId}`,
    `LeaderId:               ${partition.leaderId}`,
    `LeaderEpoch:            ${partition.leaderEpoch}`,
    `HighWatermark:          ${partition.highWatermark}`,
    `MaxFollowerLag:         ${maxFollowerLag}`,
    `MaxFollowerLagTimeMs:   ${maxFollowerLagTimeMs}`,
    `CurrentVoters:          ${formatReplicas(partition.currentVoters, quorum.nodes)}`,
    `CurrentObservers:       ${formatReplicas(partition.observers, quorum.nodes)}`,
  ].join('\n') + '\n';
}

/** The --replication table, as MetadataQuorumCommand.handleDescribeReplication prints it. */
export function formatQuorumReplication(partition: QuorumPartition, options: { humanReadable: boolean; nowMs: number }): string {
  const leader = leaderState(partition);
  const time = (timestampMs: number): string => (timestampMs < 0 ? '-1' : options.humanReadable ? `${options.nowMs - timestampMs} ms ago` : String(timestampMs));
  const row = (replica: ReplicaState, status: string): string[] => [
    String(replica.replicaId),
    replica.replicaDirectoryId,
    String(replica.logEndOffset),
    String(leader.logEndOffset - replica.logEndOffset),
    time(replica.lastFetchTimestamp),
    time(replica.lastCaughtUpTimestamp),
    status,
  ];
  const rows = [
    row(leader, 'Leader'),
    ...partition.currentVoters.filter((v) => v.replicaId !== partition.leaderId).map((v) => row(v, 'Follower')),
    ...partition.observers.map((o) => row(o, 'Observer')),
  ];
  return prettyPrintTable(['NodeId', 'DirectoryId', 'LogEndOffset', 'Lag', 'LastFetchTimestamp', 'LastCaughtUpTimestamp', 'Status'], rows);
}


function leaderState(partition: QuorumPartition): ReplicaState {
  const leader = partition.currentVoters.find((voter) => voter.replicaId === partition.leaderId);
  if (leader === undefined) throw new CliError(`the leader ${partition.leaderId} is not among the voters`);
  return leader;
}

function formatReplicas(replicas: readonly ReplicaState[], nodes: QuorumNodes): string {
  const entries = replicas.map((replica) => {
    const directoryId = replica.replicaDirectoryId === ZERO_UUID ? 'null' : `"${replica.replicaDirectoryId}"`;
    const endpoints = nodes.find((n) => n.nodeId === replica.replicaId)?.listeners ?? [];
    const listed = endpoints.length === 0 ? '' : `, "endpoints": [${endpoints.map((e) => `"${e.name}://${e.host}:${e.port}"`).join(', ')}]`;
    return `{"id": ${replica.replicaId}, "directoryId": ${directoryId}${listed}}`;
  });
  return `[${entries.join(', ')}]`;
}

/** A connection to the active controller (through a controller listener: DescribeCluster names it), and the cluster id. */
async function activeController(io: CliIo, target: { address: string; controller: boolean }): Promise<{ connection: BrokerConnection; clusterId: string }> {
  const connection = await connect(io, target.address);
  try {
    const cluster = await connection.send(DescribeCluster, { endpointType: target.controller ? CONTROLLER_ENDPOINTS : 1, includeClusterAuthorizedOperations: false });
    if (cluster.errorCode !== ErrorCode.NONE) throw new KafkaError(cluster.errorCode, cluster.errorMessage);
    const active = target.controller ? cluster.brokers.find((b) => b.brokerId === cluster.controllerId) : undefined;
    if (active === undefined) return { connection, clusterId: cluster.clusterId };
    await connection.close();
    return { connection: await connect(io, `${active.host}:${active.port}`), clusterId: cluster.clusterId };
  } catch (error) {
    await connection.close();
    throw error;
  }
}

/** DescribeQuorum of the active controller, and the cluster id. */
async function describeQuorum(io: CliIo, target: { address: string; controller: boolean }): Promise<QuorumDescription> {
  const { connection, clusterId } = await activeController(io, target);
  try {
    const response = await connection.send(DescribeQuorum, { topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] });
    const partition = response.topics[0]?.partitions[0];
    if (response.errorCode !== ErrorCode.NONE) throw new KafkaError(response.errorCode, response.errorMessage);
    if (partition === undefined) throw new CliError('DescribeQuorum answered without the metadata partition');
    if (partition.errorCode !== ErrorCode.NONE) throw new KafkaError(partition.errorCode, partition.errorMessage);
    return { clusterId, partition, nodes: response.nodes };
  } finally {
    await connection.close();
  }
}

function connect(io: CliIo, address: string): Promise<BrokerConnection> {
  const [host, port] = splitAddress(address.split(',')[0]!.trim());
  return BrokerConnection.connect({ host, port, env: io.env, clientId: 'spool-metadata-quorum' });
}

function splitAddress(address: string): [string, number] {
  const colon = address.lastIndexOf(':');
  const port = Number(address.slice(colon + 1));
  if (colon <= 0 || !Number.isInteger(port)) throw new CliError(`Please provide valid host:port like host1:9091,host2:9092`);
  return [address.slice(0, colon).replace(/^\[(.*)\]$/, '$1'), port];
}

/** The controller a properties file describes, read as MetadataQuorumCommand reads it for add-controller. */
export async function controllerToAdd(io: CliIo, properties: ReadonlyMap<string, string>): Promise<{ id: number; directoryId: string; endpoints: { name: string; host: string; port: number }[] }> {
  const invalid = 'Is this a valid controller configuration file?';
  const nodeId = properties.get('node.id');
  if (nodeId === undefined) throw new CliError(`node.id not found in configuration file. ${invalid}`);
  const id = Number(nodeId);
  if (!Number.isInteger(id)) throw new CliError(`For input string: "${nodeId}"`);
  if (id < 0) throw new CliError(`node.id was negative in configuration file. ${invalid}`);
  if (!(properties.get('process.roles') ?? '').includes('controller')) throw new CliError(`process.roles did not contain 'controller' in configuration file. ${invalid}`);
  const metadataDir = properties.get('metadata.log.dir') ?? properties.get('log.dirs')?.trim().split(',')[0];
  if (metadataDir === undefined) throw new CliError(`Neither metadata.log.dir nor log.dirs were found. ${invalid}`);
  const meta = await readMetaProperties(io.env.fs, metadataDir).catch(() => null);
  if (meta === null) throw new CliError(`Unable to read meta.properties from ${metadataDir}`);
  if (meta.directoryId === '') throw new CliError(`No directory id found in ${metadataDir}`);
  const listeners = new Map<string, { host: string; port: number }>();
  for (const name of ['listeners', 'advertised.listeners']) {
    for (const listener of parseListeners(splitConfigList(properties.get(name) ?? ''))) listeners.set(listener.name, { host: listener.host === '' ? 'localhost' : listener.host, port: listener.port });
  }
  const controllerNames = properties.get('controller.listener.names');
  if (controllerNames === undefined) throw new CliError(`controller.listener.names was not found. ${invalid}`);
  const endpoints = splitConfigList(controllerNames).map((raw) => {
    const name = raw.toUpperCase();
    const endpoint = listeners.get(name);
    if (endpoint === undefined) throw new CliError(`Cannot find information about controller listener name: ${name}`);
    return { name, ...endpoint };
  });
  return { id, directoryId: meta.directoryId, endpoints };
}

async function addController(io: CliIo, target: { address: string; controller: boolean }, options: { commandConfig: string; dryRun: boolean }): Promise<void> {
  if ((await io.env.fs.stat(options.commandConfig)) === null) throw new CliError(`Properties file ${options.commandConfig} does not exists!`);
  const properties = parseProperties((await io.env.fs.readFile(options.commandConfig)).toString('utf8'));
  const voter = await controllerToAdd(io, properties);
  if (!options.dryRun) {
    const { connection } = await activeController(io, target);
    try {
      const response = await connection.send(AddRaftVoter, {
        clusterId: null,
        timeoutMs: ADD_VOTER_TIMEOUT_MS,
        voterId: voter.id,
        voterDirectoryId: voter.directoryId,
        listeners: voter.endpoints,
        ackWhenCommitted: true,
      });
      if (response.errorCode !== ErrorCode.NONE) throw new KafkaError(response.errorCode, response.errorMessage);
    } finally {
      await connection.close();
    }
  }
  const endpoints = voter.endpoints.map((e) => `${e.name}://${e.host.includes(':') ? `[${e.host}]` : e.host}:${e.port}`).join(', ');
  io.stdout(`${options.dryRun ? 'DRY RUN of adding' : 'Added'} controller ${voter.id} with directory id ${voter.directoryId} and endpoints: ${endpoints}\n`);
}

async function removeController(io: CliIo, target: { address: string; controller: boolean }, options: { controllerId: string; directoryId: string; dryRun: boolean }): Promise<void> {
  const controllerId = Number(options.controllerId);
  if (!Number.isInteger(controllerId)) throw new CliError(`argument --controller-id/-i: could not convert '${options.controllerId}' to Integer`);
  if (controllerId < 0) throw new CliError(`Invalid negative --controller-id: ${controllerId}`);
  if (!UUID_PATTERN.test(options.directoryId)) throw new CliError(`Failed to parse --controller-directory-id: Input string \`${options.directoryId}\` decoded as ${Buffer.from(options.directoryId, 'base64url').length} bytes, which is not equal to the expected 16 bytes of a base64-encoded UUID`);
  if (!options.dryRun) {
    const { connection } = await activeController(io, target);
    try {
      const response = await connection.send(RemoveRaftVoter, { clusterId: null, voterId: controllerId, voterDirectoryId: options.directoryId });
      if (response.errorCode !== ErrorCode.NONE) throw new KafkaError(response.errorCode, response.errorMessage);
    } finally {
      await connection.close();
    }
  }
  io.stdout(`${options.dryRun ? 'DRY RUN of removing' : 'Removed'} KRaft controller ${controllerId} with directory id ${options.directoryId}\n`);
}

export function registerMetadataQuorum(program: Command, io: CliIo): void {
  const quorum = program
    .command('metadata-quorum')
    .description('Describe and change the KRaft metadata quorum (like kafka-metadata-quorum.sh)')
    .option('--bootstrap-server <server>', 'a broker to connect to')
    .option('--bootstrap-controller <controller>', 'a controller to connect to')
    .option('--command-config <file>', 'a properties file (add-controller: the new controller\'s configuration)');
  const targetOf = (): { address: string; controller: boolean } => {
    const parent = quorum.opts<{ bootstrapServer?: string; bootstrapController?: string }>();
    if (parent.bootstrapServer !== undefined && parent.bootstrapController !== undefined) throw new CliError('Only one of --bootstrap-server or --bootstrap-controller can be specified');
    return parent.bootstrapController !== undefined
      ? { address: parent.bootstrapController, controller: true }
      : { address: parent.bootstrapServer ?? DEFAULT_BOOTSTRAP_SERVER, controller: false };
  };
  quorum
    .command('add-controller')
    .description('Add a controller to the KRaft controller cluster')
    .exitOverride()
    .configureOutput({ writeOut: (text) => io.stdout(text), writeErr: (text) => io.stderr(text) })
    .option('--dry-run', 'print what would be done, but do not do it')
    .action(async (flags: { dryRun?: boolean }) => {
      const commandConfig = quorum.opts<{ commandConfig?: string }>().commandConfig;
      if (commandConfig === undefined) throw new CliError('You must supply the configuration file of the controller you are adding when using add-controller.');
      await addController(io, targetOf(), { commandConfig, dryRun: flags.dryRun === true });
    });
  quorum
    .command('remove-controller')
    .description('Remove a controller from the KRaft controller cluster')
    .exitOverride()
    .configureOutput({ writeOut: (text) => io.stdout(text), writeErr: (text) => io.stderr(text) })
    .requiredOption('-i, --controller-id <id>', 'the id of the controller to remove')
    .requiredOption('-d, --controller-directory-id <id>', 'the directory id of the controller to remove')
    .option('--dry-run', 'print what would be done, but do not do it')
    .action(async (flags: { controllerId: string; controllerDirectoryId: string; dryRun?: boolean }) => {
      await removeController(io, targetOf(), { controllerId: flags.controllerId, directoryId: flags.controllerDirectoryId, dryRun: flags.dryRun === true });
    });
  quorum
    .command('describe')
    .description('Describe the metadata quorum: --status or --replication')
    .exitOverride()
    .configureOutput({ writeOut: (text) => io.stdout(text), writeErr: (text) => io.stderr(text) })
    .option('--status', 'the quorum status')
    .option('--replication', 'each replica\'s log end offset, lag and fetch times')
    .option('--human-readable', 'fetch times relative to now (with --replication)')
    .action(async (flags: { status?: boolean; replication?: boolean; humanReadable?: boolean }) => {
      if ((flags.status === true) === (flags.replication === true)) throw new CliError('Exactly one of --status or --replication must be given');
      const described = await describeQuorum(io, targetOf());
      if (flags.status === true) io.stdout(formatQuorumStatus(described));
      else io.stdout(formatQuorumReplication(described.partition, { humanReadable: flags.humanReadable === true, nowMs: io.env.clock.nowMs() }));
    });
}
