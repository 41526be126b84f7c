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
 */
import type { Command } from 'commander';
import { BrokerConnection } from '../client/connection.js';
import { KafkaError } from '../client/errors.js';
import { ErrorCode } from '../protocol/errors.js';
import type { ResponseOf } from '../protocol/schema.js';
import { DescribeQuorum } from '../protocol/schemas/55-describe-quorum.js';
import { DescribeCluster } from '../protocol/schemas/60-describe-cluster.js';
import { CliError, DEFAULT_BOOTSTRAP_SERVER, prettyPrintTable, type CliIo } from './io.js';

type QuorumPartition = ResponseOf<typeof DescribeQuorum>['topics'][number]['partitions'][number];
type ReplicaState = QuorumPartition['currentVoters'][number];
type QuorumNodes = ResponseOf<typeof DescribeQuorum>['nodes'];

const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';
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

/** DescribeQuorum of the active controller, and the cluster id. */
async function describeQuorum(io: CliIo, target: { address: string; controller: boolean }): Promise<QuorumDescription> {
  let connection = await connect(io, target.address);
  try {
    const cluster = await connection.send(DescribeCluster, { endpointType: target.controller ? CONTROLLER_ENDPOINTS : 1, includeClusterAuthorizedOperations: false });
    if (cluster.errorCode !== ErrorCode.NONE) throw new KafkaError(cluster.errorCode, cluster.errorMessage);
    const active = target.controller ? cluster.brokers.find((b) => b.brokerId === cluster.controllerId) : undefined;
    if (active !== undefined) {
      await connection.close();
      connection = await connect(io, `${active.host}:${active.port}`);
    }
    const response = await connection.send(DescribeQuorum, { topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] });
    const partition = response.topics[0]?.partitions[0];
    if (response.errorCode !== ErrorCode.NONE) throw new KafkaError(response.errorCode, response.errorMessage);
    if (partition === undefined) throw new CliError('DescribeQuorum answered without the metadata partition');
    if (partition.errorCode !== ErrorCode.NONE) throw new KafkaError(partition.errorCode, partition.errorMessage);
    return { clusterId: cluster.clusterId, partition, nodes: response.nodes };
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

export function registerMetadataQuorum(program: Command, io: CliIo): void {
  const quorum = program
    .command('metadata-quorum')
    .description('Describe the KRaft metadata quorum (like kafka-metadata-quorum.sh)')
    .option('--bootstrap-server <server>', 'a broker to connect to')
    .option('--bootstrap-controller <controller>', 'a controller to connect to');
  quorum
    .command('describe')
    .description('Describe the metadata quorum: --status or --replication')
    .exitOverride()
    .configureOutput({ writeOut: (text) => io.stdout(text), writeErr: (text) => io.stderr(text) })
    .option('--status', 'the quorum status')
    .option('--replication', 'each replica\'s log end offset, lag and fetch times')
    .option('--human-readable', 'fetch times relative to now (with --replication)')
    .action(async (flags: { status?: boolean; replication?: boolean; humanReadable?: boolean }) => {
      const parent = quorum.opts<{ bootstrapServer?: string; bootstrapController?: string }>();
      if ((flags.status === true) === (flags.replication === true)) throw new CliError('Exactly one of --status or --replication must be given');
      if (parent.bootstrapServer !== undefined && parent.bootstrapController !== undefined) throw new CliError('Only one of --bootstrap-server or --bootstrap-controller can be specified');
      const target = parent.bootstrapController !== undefined
        ? { address: parent.bootstrapController, controller: true }
        : { address: parent.bootstrapServer ?? DEFAULT_BOOTSTRAP_SERVER, controller: false };
      const described = await describeQuorum(io, target);
      if (flags.status === true) io.stdout(formatQuorumStatus(described));
      else io.stdout(formatQuorumReplication(described.partition, { humanReadable: flags.humanReadable === true, nowMs: io.env.clock.nowMs() }));
    });
}
