/**
 * One Spool node: the rooms wired together (DESIGN.md §2).
 *
 * Start order: bind listeners (so port 0 resolves to real ports before the
 * node registers its advertised endpoints), start the metadata manager
 * (replays `__cluster_metadata`, elects itself in a one-voter quorum,
 * registers this broker), which publishes the image to the replica manager
 * (opens logs, becomes leader), then serve requests.
 * Stop order (SIGTERM or stop()): stop accepting, finish in-flight requests,
 * stop the replica manager (flush, checkpoints, clean-shutdown marker), stop
 * the metadata manager.
 * Disk failure: an I/O error takes its log directory offline (storage's
 * LogDirFailureChannel); once the metadata log directory or every log
 * directory is offline the node stops on its own (Kafka halts the process)
 * and `halted` resolves with the reason.
 */
import { realEnv, type Env } from '../io/env.js';
import { BrokerConfig, SINGLE_NODE_DEFAULTS, parseListeners } from './config.js';
import { brokerListeners, type BrokerListener } from './listeners.js';
import { createLogger, type Logger } from './logger.js';
import { PENDING_RESPONSE_BYTES_MAX, PIPELINED_REQUEST_BYTES_MAX, SocketServer } from './socket-server.js';
import { RequestHandlerTable } from './request-handler.js';
import { connectionQuotaConfigFrom } from './connection-quotas.js';
import { createHandlers } from './apis/index.js';
import { MetadataManager } from '../metadata/manager.js';
import { ReplicaManager } from '../replication/replica-manager.js';
import { GroupCoordinator } from '../group/coordinator.js';
import { groupCoordinatorConfigFrom } from '../group/config.js';
import { coordinatorLogOver } from '../group/partition-log.js';
import { CONSUMER_OFFSETS_TOPIC } from '../group/placement.js';
import { LogDirFailureChannel } from '../storage/log-dir-failure-channel.js';

export interface BoundListener extends BrokerListener {
  /** The address clients are told to use (advertised.listeners, else the bound address). */
  advertisedHost: string;
  advertisedPort: number;
}

export class Broker {
  readonly nodeId: number;
  readonly metadata: MetadataManager;
  readonly replicaManager: ReplicaManager;
  readonly groupCoordinator: GroupCoordinator;
  readonly handlers: RequestHandlerTable;
  readonly logDirFailureChannel: LogDirFailureChannel;
  /** Resolves with the reason when the node stopped itself after its log directories failed. */
  readonly halted: Promise<string>;
  private haltReason: string | null = null;
  private resolveHalted!: (reason: string) => void;
  private readonly socketServer: SocketServer;
  /** `listeners`, checked at construction: a protocol Spool cannot speak stops the node before anything binds. */
  private readonly listenerSpecs: readonly BrokerListener[];
  private bound: BoundListener[] = [];
  private state: 'new' | 'starting' | 'running' | 'stopping' | 'stopped' = 'new';

  constructor(
    readonly config: BrokerConfig,
    readonly env: Env = realEnv,
    readonly log: Logger = createLogger({ name: `spool[${config.int('node.id')}]` }),
  ) {
    this.nodeId = config.int('node.id');
    this.listenerSpecs = brokerListeners(config);
    this.halted = new Promise((resolve) => (this.resolveHalted = resolve));
    this.logDirFailureChannel = new LogDirFailureChannel(log);
    this.metadata = new MetadataManager(this);
    this.replicaManager = new ReplicaManager(this);
    // After the replica manager's listener: its partitions are offline before the node decides to stop.
    this.logDirFailureChannel.onOfflineLogDir((logDir) => this.onLogDirFailure(logDir));
    const groupConfig = groupCoordinatorConfigFrom(config);
    this.groupCoordinator = new GroupCoordinator({
      nodeId: this.nodeId,
      config: groupConfig,
      env,
      logger: log,
      log: coordinatorLogOver(this.replicaManager, { topic: CONSUMER_OFFSETS_TOPIC, appendTimeoutMs: groupConfig.offsetCommitTimeoutMs }),
      image: () => this.metadata.image,
    });
    this.handlers = new RequestHandlerTable(createHandlers(this), this.log, { controllerListenerNames: config.list('controller.listener.names') });
    this.socketServer = new SocketServer(
      env,
      this.handlers,
      {
        requestBytesMax: config.int('socket.request.max.bytes'),
        queuedRequestsMax: config.int('queued.max.requests'),
        queuedBytesMax: PIPELINED_REQUEST_BYTES_MAX,
        idleMs: config.int('connections.max.idle.ms'),
        pendingResponseBytesMax: PENDING_RESPONSE_BYTES_MAX,
        requestPoolBytes: config.int('queued.max.request.bytes'),
        connectionQuotas: connectionQuotaConfigFrom(config),
      },
      this.log,
    );
  }

  /** Listeners as bound, with the endpoints advertised for each. */
  get listeners(): readonly BoundListener[] {
    return this.bound;
  }

  /** The listener that clients use: the first non-controller listener. */
  get clientListener(): BoundListener {
    const controllerNames = new Set(this.config.list('controller.listener.names'));
    const listener = this.bound.find((l) => !controllerNames.has(l.name)) ?? this.bound[0];
    if (listener === undefined) throw new Error('broker has no listeners');
    return listener;
  }

  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error(`cannot start a broker that is ${this.state}`);
    this.state = 'starting';
    const advertised = new Map(parseListeners(this.config.list('advertised.listeners')).map((l) => [l.name, l]));
    for (const spec of this.listenerSpecs) {
      const listener = await this.socketServer.listen(spec.name, spec.host || '0.0.0.0', spec.port);
      const announced = advertised.get(spec.name);
      this.bound.push({
        ...spec,
        port: listener.port,
        advertisedHost: announced?.host || spec.host || '127.0.0.1',
        advertisedPort: announced?.port || listener.port,
      });
    }
    this.metadata.addPublisher(this.replicaManager);
    this.metadata.addPublisher(this.groupCoordinator);
    await this.replicaManager.start();
    await this.metadata.start();
    this.state = 'running';
    if (this.haltReason !== null) {
      await this.stop();
      throw new Error(`broker stopped during start: ${this.haltReason}`);
    }
  }

  /** Kafka halts when the metadata log directory fails, or the last log directory does. */
  private onLogDirFailure(logDir: string): void {
    const metadataDir = this.config.string('metadata.log.dir') ?? this.config.logDirs[0]!;
    const live = this.config.logDirs.filter((dir) => !this.logDirFailureChannel.hasOfflineLogDir(dir));
    if (logDir === metadataDir) this.halt(`the metadata log directory ${logDir} has failed`);
    else if (live.length === 0) this.halt(`all log directories (${this.config.logDirs.join(', ')}) have failed`);
  }

  private halt(reason: string): void {
    if (this.haltReason !== null) return;
    this.haltReason = reason;
    this.log.error(`shutting down the broker: ${reason}`);
    this.resolveHalted(reason);
    if (this.state === 'running') this.stop().catch((error: unknown) => this.log.error(`stop after a log directory failure: ${String(error)}`));
  }

  async stop(): Promise<void> {
    if (this.state === 'stopped' || this.state === 'stopping') return;
    this.state = 'stopping';
    this.replicaManager.beginShutdown();
    await this.socketServer.shutdown();
    await this.groupCoordinator.shutdown();
    await this.replicaManager.stop();
    await this.metadata.stop();
    this.state = 'stopped';
  }

  get running(): boolean {
    return this.state === 'running';
  }
}

export interface StartBrokerOptions {
  /** Kafka broker properties (`log.dirs`, `num.partitions`, `listeners`, ...). */
  config?: Record<string, string | number | boolean>;
  env?: Env;
  logger?: Logger;
}

export interface RunningBroker {
  /** `host:port` of the client listener, for a client's bootstrap.servers. */
  bootstrapServers: string;
  broker: Broker;
  stop(): Promise<void>;
}

/**
 * Starts a node for embedding in a Node process (tests, tools). Port 0 picks
 * free ports, so several brokers can run in one process. Kafka's quickstart
 * single-node settings apply unless `config` says otherwise.
 */
export async function startBroker(options: StartBrokerOptions = {}): Promise<RunningBroker> {
  const config = BrokerConfig.fromObject({
    ...SINGLE_NODE_DEFAULTS,
    listeners: 'PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0',
    ...options.config,
  });
  const broker = new Broker(config, options.env ?? realEnv, options.logger);
  await broker.start();
  const client = broker.clientListener;
  return {
    bootstrapServers: `${client.advertisedHost}:${client.advertisedPort}`,
    broker,
    stop: () => broker.stop(),
  };
}
