/**
 * SharedServer: what a node's roles share (Kafka's SharedServer): the
 * environment, the config, the log-directory failure channel, the formatted
 * log directories (meta.properties), the `__cluster_metadata` log with its
 * Raft client, and the MetadataLoader that publishes the image.
 *
 * Start is in three steps so each role can hook in between:
 *   open()      checks or writes meta.properties in every log directory and
 *               opens the metadata log and the Raft client;
 *   (the controller role registers its QuorumController on Raft here)
 *   startRaft() registers the loader and starts Raft, which loads the latest
 *               snapshot, replays the log and, as the only voter, elects
 *               this node.
 */
import type { BrokerConfig } from '../common/config.js';
import type { Logger } from '../common/logger.js';
import type { Env } from '../io/env.js';
import type { HostAndPort, QuorumVoter } from '../common/quorum-config.js';
import { parseListeners } from '../common/config.js';
import { ensureMetaProperties } from '../metadata/meta-properties.js';
import { decodeMetadataRecord, encodeMetadataRecord, type MetadataRecord } from '../metadata/records.js';
import { KafkaRaftClient, type RaftRequestServer } from '../raft/raft-client.js';
import { KafkaRaftChannel, bootstrapServerIds } from '../raft/raft-channel.js';
import { quorumConfigFrom } from '../raft/quorum-config.js';
import { RaftLog } from '../raft/raft-log.js';
import { isIoError } from '../storage/errors.js';
import type { LogDirFailureChannel } from '../storage/log-dir-failure-channel.js';
import { MetadataLoader } from './metadata-loader.js';

/** Kafka's default metadata.log.segment.ms (7 days). */
const METADATA_LOG_SEGMENT_MS = 604_800_000;

export interface SharedServerOptions {
  nodeId: number;
  config: BrokerConfig;
  env: Env;
  log: Logger;
  logDirFailureChannel: LogDirFailureChannel;
  /** controller.quorum.voters, parsed; empty for a standalone node or a dynamic quorum. */
  voters: readonly QuorumVoter[];
  /** controller.quorum.bootstrap.servers, parsed: with no static voters, the quorum is dynamic (KIP-853). */
  bootstrapServers?: readonly HostAndPort[];
}

export class SharedServer {
  readonly nodeId: number;
  readonly config: BrokerConfig;
  readonly env: Env;
  readonly log: Logger;
  readonly logDirFailureChannel: LogDirFailureChannel;
  readonly loader: MetadataLoader;
  private readonly configuredVoters: readonly QuorumVoter[];
  private readonly bootstrapServers: readonly HostAndPort[];
  private raftValue: KafkaRaftClient<MetadataRecord> | null = null;
  private clusterIdValue: string | null = null;
  private directoryIds = new Map<string, string>();

  constructor(options: SharedServerOptions) {
    this.nodeId = options.nodeId;
    this.config = options.config;
    this.env = options.env;
    this.log = options.log;
    this.logDirFailureChannel = options.logDirFailureChannel;
    this.configuredVoters = options.voters;
    this.bootstrapServers = options.bootstrapServers ?? [];
    this.loader = new MetadataLoader({
      nodeId: this.nodeId,
      config: this.config,
      log: this.log,
      onSnapshotFailure: (error, message) => this.onSnapshotFailure(error, message),
    });
  }

  /** metadata.log.dir, else the first log directory (Kafka's rule). */
  get metadataLogDir(): string {
    return this.config.string('metadata.log.dir') ?? this.config.logDirs[0]!;
  }

  /** Raft's RPCs served by this node's Raft client (the handlers exist before the metadata log opens). */
  readonly raftRequests: RaftRequestServer = this.raftRequestServer();

  private raftRequestServer(): RaftRequestServer {
    const raft = () => this.raft;
    const opened = () => this.raftValue;
    return {
      get leaderAndEpoch() {
        return opened()?.leaderAndEpoch ?? { leaderId: null, epoch: 0 };
      },
      get kraftVersion() {
        return opened()?.kraftVersion ?? 0;
      },
      handleVote: (request) => raft().handleVote(request),
      handleBeginQuorumEpoch: (request) => raft().handleBeginQuorumEpoch(request),
      handleEndQuorumEpoch: (request) => raft().handleEndQuorumEpoch(request),
      handleFetch: (request, version) => raft().handleFetch(request, version),
      handleFetchSnapshot: (request) => raft().handleFetchSnapshot(request),
      describeQuorum: () => raft().describeQuorum(),
      handleAddRaftVoter: (request) => raft().handleAddRaftVoter(request),
      handleRemoveRaftVoter: (request) => raft().handleRemoveRaftVoter(request),
      updateVoter: (voter, epoch, options) => raft().updateVoter(voter, epoch, options),
      voterEndpoint: (id) => opened()?.voterEndpoint(id),
    };
  }

  /** The Raft leader this node knows of; null while none is known or the metadata log is not open. */
  get raftLeaderId(): number | null {
    return this.raftValue?.leaderAndEpoch.leaderId ?? null;
  }

  /** The Raft client, or null while the metadata log is not open (for readers that may come early, as a metrics scrape). */
  get raftIfOpen(): KafkaRaftClient<MetadataRecord> | null {
    return this.raftValue;
  }

  get raft(): KafkaRaftClient<MetadataRecord> {
    if (this.raftValue === null) throw new Error('the metadata log is not open');
    return this.raftValue;
  }

  get clusterId(): string {
    if (this.clusterIdValue === null) throw new Error('the log directories are not formatted yet');
    return this.clusterIdValue;
  }

  /** directory.id of each of log.dirs, in order (BrokerRegistration's logDirs). */
  get logDirIds(): string[] {
    return this.config.logDirs.map((dir) => this.directoryIds.get(dir)!);
  }

  async open(): Promise<void> {
    const { config, env, nodeId } = this;
    const metadataDir = this.metadataLogDir;
    const dirs = [...new Set([...config.logDirs, metadataDir])];
    const formatted = await ensureMetaProperties(env, { dirs, nodeId, configuredClusterId: config.string('cluster.id') });
    this.clusterIdValue = formatted.clusterId;
    this.directoryIds = formatted.directoryIds;
    const raftLog = await RaftLog.open(env, {
      logDir: metadataDir,
      segmentBytes: config.int('metadata.log.segment.bytes'),
      segmentMs: METADATA_LOG_SEGMENT_MS,
      retentionBytes: config.int('metadata.max.retention.bytes'),
      logger: this.log,
      onIoError: (error) => this.logDirFailureChannel.maybeAddOfflineLogDir(metadataDir, `${metadataDir}: I/O error in the metadata log`, error),
    });
    this.logDirFailureChannel.onOfflineLogDir((logDir) => {
      if (logDir === metadataDir) raftLog.markOffline(this.logDirFailureChannel.offlineCause(logDir)!);
    });
    const voters = this.voters();
    const quorumConfig = quorumConfigFrom(config);
    const alone = !this.dynamicQuorum && voters.length === 1 && voters[0] === nodeId;
    const listenerName = config.list('controller.listener.names')[0] ?? 'CONTROLLER';
    const localEndpoint = this.localControllerEndpoint(listenerName);
    const channel = new KafkaRaftChannel({
      env,
      voters: this.configuredVoters,
      bootstrapServers: this.bootstrapServers,
      requestTimeoutMs: quorumConfig.requestTimeoutMs,
      clientId: `raft-client-${nodeId}`,
    });
    const raft = new KafkaRaftClient<MetadataRecord>({
      nodeId,
      voters,
      listenerName,
      ...(localEndpoint === null ? {} : { localEndpoint }),
      ...(this.dynamicQuorum ? { bootstrapServers: bootstrapServerIds(this.bootstrapServers.length) } : {}),
      directoryId: formatted.directoryIds.get(metadataDir)!,
      log: raftLog,
      serde: { encode: encodeMetadataRecord, decode: decodeMetadataRecord },
      env,
      quorumConfig,
      clusterId: formatted.clusterId,
      logger: this.log,
      ...(alone ? {} : { channel }),
    });
    this.raftValue = raft;
    this.loader.open(formatted.clusterId, raft);
  }

  /**
   * Registers the loader after any other Raft listener, and starts Raft.
   * With other voters it then waits until a leader is known and this node
   * has replayed the log up to the leader's high watermark (Kafka's brokers
   * and controllers wait to catch up before they act on metadata).
   */
  async startRaft(): Promise<void> {
    this.raft.register(this.loader);
    await this.raft.start();
    await this.raft.awaitCaughtUp();
  }

  /** KIP-853: no controller.quorum.voters but bootstrap servers; the voters are the log's. */
  get dynamicQuorum(): boolean {
    return this.configuredVoters.length === 0 && this.bootstrapServers.length > 0;
  }

  /** This controller's advertised endpoint on the controller listener (what it announces as leader); null on a broker-only node. */
  private localControllerEndpoint(listenerName: string): { name: string; host: string; port: number } | null {
    const advertised = parseListeners(this.config.list('advertised.listeners')).find((l) => l.name === listenerName);
    const listener = advertised ?? parseListeners(this.config.list('listeners')).find((l) => l.name === listenerName);
    return listener === undefined ? null : { name: listenerName, host: listener.host, port: listener.port };
  }

  /** controller.quorum.voters ids; this node alone (a standalone node); none for a dynamic quorum (the log names them). */
  private voters(): number[] {
    if (this.dynamicQuorum) return [];
    if (this.configuredVoters.length === 0) return [this.nodeId];
    return this.configuredVoters.map((voter) => voter.id);
  }

  /** A snapshot that could not be written for a disk error takes the metadata log directory offline (the node then stops). */
  private onSnapshotFailure(error: unknown, message: string): void {
    if (isIoError(error)) this.logDirFailureChannel.maybeAddOfflineLogDir(this.metadataLogDir, message, error);
    else this.log.error(`${message}: ${String(error)}`);
  }

  async stop(): Promise<void> {
    await this.loader.awaitSnapshots();
    await this.raftValue?.close();
  }
}
