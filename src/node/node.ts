/**
 * SpoolNode: one Spool process's composition root (Kafka's KafkaRaftServer).
 * process.roles decides which rooms it runs: the SharedServer (config,
 * meta.properties, the metadata log, Raft, the MetadataLoader) always; the
 * ControllerServer for `controller`; the BrokerServer for `broker`. One
 * SocketServer serves every listener, each with its role's handlers.
 *
 * Start order: bind listeners (so port 0 resolves to real ports before the
 * node registers its advertised endpoints); open the broker's logs; format
 * or check the log directories and open the metadata log; start Raft (which
 * replays the log into the controller and the loader and, as the only voter,
 * elects this node); the controller writes a new cluster's bootstrap
 * records and registers itself; the broker registers through the controller
 * channel and, once the controller says it has caught up, the first image
 * is published (the replica manager opens logs) and the broker asks to be
 * unfenced (it becomes leader as the unfencing records arrive); only then
 * are requests served, and the web console (console.listener) binds.
 * Stop order (SIGTERM or stop()): the web console closes; the broker's controlled shutdown (its
 * leaderships move away while it still serves), the broker listeners stop
 * accepting and finish in-flight requests, stop the broker (flush,
 * checkpoints, clean-shutdown marker), stop the controller and Raft, and
 * only then close the controller listeners, which serve the quorum (other
 * nodes' controlled shutdowns) until Raft is gone.
 * Disk failure: an I/O error takes its log directory offline (storage's
 * LogDirFailureChannel); once the metadata log directory or every log
 * directory is offline the node stops on its own (Kafka halts the process)
 * and `halted` resolves with the reason.
 */
import { realEnv, type Env } from '../io/env.js';
import { BrokerConfig, parseListeners } from '../common/config.js';
import { createLogger, type Logger } from '../common/logger.js';
import type { BrokerEndpoint } from '../metadata/image.js';
import { brokerListeners, SECURITY_PROTOCOL_IDS, type BrokerListener } from '../server/listeners.js';
import { listenerSecurity } from '../security/listener-security.js';
import { PENDING_RESPONSE_BYTES_MAX, PIPELINED_REQUEST_BYTES_MAX, SocketServer } from '../server/socket-server.js';
import { RequestHandlerTable } from '../server/request-handler.js';
import { connectionQuotaConfigFrom } from '../server/connection-quotas.js';
import { brokerHandlers, controllerHandlers, sharedHandlers } from '../server/apis/index.js';
import type { ApiContext, ControllerApiContext, ControllerOperations } from '../server/api-context.js';
import { ControllerMutationQuotaManager } from '../server/controller-mutation-quota.js';
import { ListenerTlsReloader } from '../server/listener-tls-reloader.js';
import type { ApiHandler, ListenerRole } from '../server/handler.js';
import { StandardAuthorizer } from '../security/authorizer/standard-authorizer.js';
import type { ReplicaManager } from '../replication/replica-manager.js';
import type { ShareCoordinator } from '../share/coordinator/coordinator.js';
import type { SharePersister } from '../share/persister.js';
import type { SharePartitionManager } from '../share/share-partition-manager.js';
import type { GroupCoordinator } from '../group/coordinator.js';
import { LogDirFailureChannel } from '../storage/log-dir-failure-channel.js';
import { SharedServer } from './shared-server.js';
import { ControllerServer, NO_LOCAL_CONTROLLER } from './controller-server.js';
import { BrokerServer } from './broker-server.js';
import { InProcessControllerChannel, type ControllerChannel } from './controller-channel.js';
import { RpcControllerChannel, controllerCandidates } from './rpc-controller-channel.js';
import { forwardingHandler } from './forwarding.js';
import { FORWARDABLE_API_KEYS } from '../protocol/envelope.js';
import type { MetadataLoader } from './metadata-loader.js';
import { validateKRaftConfig } from './kraft-config.js';
import type { QuorumVoter } from '../common/quorum-config.js';
import type { HttpListener } from '../io/http.js';
import { CONSOLE_LISTENER_CONFIG, nodeConsoleSources, startConsole } from '../insight/console-server.js';
import { METRICS_LISTENER_CONFIG, NodeMetrics } from '../insight/metrics.js';
import { operatorHttp } from '../io/http.js';

export interface BoundListener extends BrokerListener {
  /** The address clients are told to use (advertised.listeners, else the bound address). */
  advertisedHost: string;
  advertisedPort: number;
}

/** A listener could not bind (its port taken, say); the node has closed what it bound and cannot be started again. */
export class ListenerBindError extends Error {
  constructor(readonly listenerName: string, readonly address: string, cause: Error) {
    super(`Cannot bind listener ${listenerName} to ${address}: ${cause.message}`, { cause });
    this.name = 'ListenerBindError';
  }
}

export class SpoolNode {
  readonly nodeId: number;
  readonly roles: ReadonlySet<ListenerRole>;
  readonly shared: SharedServer;
  /** The controller role, or null on a broker-only node. */
  readonly controllerServer: ControllerServer | null;
  /** The broker role, or null on a controller-only node. */
  readonly brokerServer: BrokerServer | null;
  readonly handlers: RequestHandlerTable;
  readonly logDirFailureChannel: LogDirFailureChannel;
  /** Resolves with the reason when the node stopped itself after its log directories failed. */
  readonly halted: Promise<string>;
  private haltReason: string | null = null;
  private resolveHalted!: (reason: string) => void;
  private readonly socketServer: SocketServer;
  /** The channel to a remote controller (a broker-only node), closed when the node stops. */
  private rpcChannel: RpcControllerChannel | null = null;
  private channel: ControllerChannel | null = null;
  /** controller.quorum.voters, parsed. */
  private readonly voters: readonly QuorumVoter[];
  /** `listeners`, checked at construction: a protocol Spool cannot speak stops the node before anything binds. */
  private readonly listenerSpecs: readonly BrokerListener[];
  private bound: BoundListener[] = [];
  /** What the listeners' security started and stop() ends (an http(s) JWKS endpoint's refresh timer). */
  private readonly securityClosers: (() => void)[] = [];
  /** The web console (console.listener), null when off. */
  private consoleHttp: HttpListener | null = null;
  /** GET /metrics (metrics.listener), or null when off. */
  private readonly metrics: NodeMetrics | null;
  private metricsHttp: HttpListener | null = null;
  private state: 'new' | 'starting' | 'running' | 'stopping' | 'stopped' = 'new';
  /** Dynamic keystore and truststore updates of the TLS listeners (src/server/listener-tls-reloader.ts). */
  private readonly listenerTls: ListenerTlsReloader;
  /** The controller's controller_mutation_rate quotas (KIP-599); null without the controller role. */
  private readonly controllerMutationQuota: ControllerMutationQuotaManager | null;

  constructor(
    readonly config: BrokerConfig,
    readonly env: Env = realEnv,
    readonly log: Logger = createLogger({ name: `spool[${config.int('node.id')}]` }),
  ) {
    this.nodeId = config.int('node.id');
    this.listenerSpecs = brokerListeners(config);
    this.listenerTls = new ListenerTlsReloader({ nodeId: this.nodeId, config, fs: env.fs, log }, {
      specs: this.listenerSpecs,
      server: { listenerTls: (name) => this.socketServer.listenerTls(name), setListenerTls: (name, tls) => this.socketServer.setListenerTls(name, tls) },
    });
    const kraft = validateKRaftConfig(config);
    this.roles = kraft.roles;
    this.voters = kraft.voters;
    this.halted = new Promise((resolve) => (this.resolveHalted = resolve));
    this.logDirFailureChannel = new LogDirFailureChannel(log);
    this.shared = new SharedServer({ nodeId: this.nodeId, config, env, log, logDirFailureChannel: this.logDirFailureChannel, voters: kraft.voters, bootstrapServers: kraft.bootstrapServers });
    this.controllerServer = this.roles.has('controller') ? new ControllerServer(this.shared) : null;
    this.brokerServer = this.roles.has('broker') ? new BrokerServer(this.shared, this.controllerChannel()) : null;
    if (this.brokerServer !== null) this.shared.loader.addPublisher(this.listenerTls);
    this.controllerMutationQuota = this.controllerServer === null ? null : ControllerMutationQuotaManager.fromConfig(config, () => env.clock.monotonicMs());
    if (this.controllerMutationQuota !== null) this.shared.loader.addPublisher(this.controllerMutationQuota);
    // After the replica manager's listener: its partitions are offline before the node decides to stop.
    this.logDirFailureChannel.onOfflineLogDir((logDir) => this.onLogDirFailure(logDir));
    const requestQuota = this.brokerServer === null ? undefined : { manager: this.brokerServer.clientQuotas.request, nowMs: () => env.clock.monotonicMs() };
    this.handlers = new RequestHandlerTable(this.createHandlers(), this.log, { controllerListenerNames: config.list('controller.listener.names'), roles: this.roles, requestQuota });
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
    const sharePartitions = this.brokerServer?.sharePartitionManager;
    if (sharePartitions !== undefined) this.socketServer.onConnectionClosed((connectionId) => sharePartitions.connectionClosed(connectionId));
    this.metrics = NodeMetrics.fromConfig(config, {
      clock: env.clock,
      socketServer: this.socketServer,
      replicaManager: this.brokerServer?.replicaManager ?? null,
      groupCoordinator: this.brokerServer?.groupCoordinator ?? null,
      image: () => this.shared.loader.image,
      controller: this.controllerServer === null ? null : { isActive: () => this.state === 'running' && this.shared.raft.isLeader },
      raft: { nodeId: this.nodeId, raft: () => this.shared.raftIfOpen },
      quotas: {
        ...(this.brokerServer === null ? {} : { produce: this.brokerServer.clientQuotas.produce, fetch: this.brokerServer.clientQuotas.fetch, request: this.brokerServer.clientQuotas.request }),
        ...(this.controllerMutationQuota === null ? {} : { controllerMutation: this.controllerMutationQuota }),
      },
    });
  }

  /**
   * The only voter of a standalone quorum talks to its controller
   * in-process; any other node (broker-only, or one of several controllers)
   * reaches the active controller over Kafka's wire, as Kafka's
   * NodeToControllerChannelManager does, itself included.
   */
  private controllerChannel(): ControllerChannel {
    if (this.channel !== null) return this.channel;
    this.channel = this.createControllerChannel();
    return this.channel;
  }

  private createControllerChannel(): ControllerChannel {
    if (this.controllerServer === null || !this.standalone) {
      this.rpcChannel = new RpcControllerChannel({
        nodeId: this.nodeId,
        env: this.env,
        candidates: controllerCandidates(this.config),
        requestTimeoutMs: this.config.int('request.timeout.ms'),
        // With static voters the node's own Raft client names the active controller (Kafka's RaftControllerNodeProvider).
        // With a dynamic quorum (KIP-853) the log's VotersRecord gives the leader's endpoint.
        ...(this.voters.length > 0 || this.shared.dynamicQuorum ? { activeController: () => this.raftLeaderAddress() } : {}),
      });
      return this.rpcChannel;
    }
    const listenerName = this.config.list('controller.listener.names')[0] ?? 'CONTROLLER';
    return new InProcessControllerChannel((apiKey) => this.handlers.handlerFor('controller', apiKey), { nodeId: this.nodeId, listenerName });
  }

  /** The Raft leader's controller address among the static voters, or null while no leader is known. */
  private raftLeaderAddress(): { host: string; port: number } | null {
    const leaderId = this.shared.raftLeaderId;
    if (leaderId === null) return null;
    if (this.shared.dynamicQuorum) {
      // This node leading: its own controller listener as bound (the VotersRecord has what it was formatted with).
      const own = leaderId === this.nodeId ? this.bound.find((l) => this.config.list('controller.listener.names').includes(l.name)) : undefined;
      if (own !== undefined) return { host: own.advertisedHost, port: own.advertisedPort };
      return this.shared.raftRequests.voterEndpoint(leaderId) ?? null;
    }
    const voter = this.voters.find((v) => v.id === leaderId);
    return voter === undefined ? null : { host: voter.host, port: voter.port };
  }

  /** A controller whose quorum is itself alone (no controller.quorum.voters, or only itself), as SharedServer runs Raft. */
  private get standalone(): boolean {
    return this.roles.has('controller') && !this.shared.dynamicQuorum && this.voters.every((v) => v.id === this.nodeId);
  }

  private createHandlers() {
    const base: ControllerApiContext = {
      nodeId: this.nodeId,
      config: this.config,
      log: this.log,
      metadata: this.shared.loader,
      controller: this.controller,
      raft: this.shared.raftRequests,
      handlers: {
        roleOf: (name) => this.handlers.roleOf(name),
        advertisedVersions: (name) => this.handlers.advertisedVersions(name),
        handlerFor: (role, apiKey) => this.handlers.handlerFor(role, apiKey),
      },
      authorizer: StandardAuthorizer.fromConfig(this.config, () => this.shared.loader.image.acls),
      controllerMutationQuota: this.controllerMutationQuota ?? undefined,
      ...(this.brokerServer === null ? {} : { listenerTls: this.listenerTls }),
    };
    const rpcChannel = this.rpcChannel;
    // A node that reaches its controller by RPC forwards metadata changes it gets on broker listeners to the active controller (Envelope);
    // a controller serves them itself on its controller listeners (NOT_CONTROLLER unless active), so an Envelope never comes back to be forwarded.
    const handlers: ApiHandler[] = [];
    for (const handler of sharedHandlers(base)) {
      if (rpcChannel === null || !FORWARDABLE_API_KEYS.has(handler.api.key)) handlers.push(handler);
      else if (this.controllerServer === null) handlers.push(forwardingHandler(handler, rpcChannel));
      else handlers.push({ ...forwardingHandler(handler, rpcChannel), listeners: ['broker'] }, { ...handler, listeners: ['controller'] });
    }
    if (this.controllerServer !== null) handlers.push(...controllerHandlers(base));
    const broker = this.brokerServer;
    if (broker !== null) {
      const context: ApiContext = { ...base, replicaManager: broker.replicaManager, groupCoordinator: broker.groupCoordinator, autoTopicCreation: broker, transactionCoordinator: broker.transactionCoordinator, addPartitionsToTxn: broker.addPartitionsToTxn, sharePartitionManager: broker.sharePartitionManager, shareCoordinator: broker.shareCoordinator, sharePersister: broker.sharePersister, clientQuotas: broker.clientQuotas };
      handlers.push(...brokerHandlers(context));
    }
    return handlers;
  }

  /** The controller's operations: this node's controller, or NOT_CONTROLLER for all on a broker-only node. */
  get controller(): ControllerOperations {
    return this.controllerServer ?? NO_LOCAL_CONTROLLER;
  }

  /** The published metadata image and topic configs. */
  get metadata(): MetadataLoader {
    return this.shared.loader;
  }

  get replicaManager(): ReplicaManager {
    return this.requireBroker().replicaManager;
  }

  get groupCoordinator(): GroupCoordinator {
    return this.requireBroker().groupCoordinator;
  }

  get shareCoordinator(): ShareCoordinator {
    return this.requireBroker().shareCoordinator;
  }

  get sharePersister(): SharePersister {
    return this.requireBroker().sharePersister;
  }

  get sharePartitionManager(): SharePartitionManager {
    return this.requireBroker().sharePartitionManager;
  }

  private requireBroker(): BrokerServer {
    if (this.brokerServer === null) throw new Error(`node ${this.nodeId} has no broker role (process.roles=${[...this.roles].join(',')})`);
    return this.brokerServer;
  }

  /** Listeners as bound, with the endpoints advertised for each. */
  get listeners(): readonly BoundListener[] {
    return this.bound;
  }

  /** The web console's address as bound (console.listener, port 0 resolved), null when the console is off. */
  get consoleListener(): { host: string; port: number } | null {
    return this.consoleHttp === null ? null : { host: this.consoleHttp.host, port: this.consoleHttp.port };
  }

  /** The listener that clients use: the first non-controller listener (a controller-only node's first listener). */
  get clientListener(): BoundListener {
    const controllerNames = new Set(this.config.list('controller.listener.names'));
    const listener = this.bound.find((l) => !controllerNames.has(l.name)) ?? this.bound[0];
    if (listener === undefined) throw new Error('node has no listeners');
    return listener;
  }

  /** The metrics listener as bound (its port when configured as 0), or null when metrics.listener is not set. */
  get metricsListener(): { host: string; port: number } | null {
    return this.metricsHttp === null ? null : { host: this.metricsHttp.host, port: this.metricsHttp.port };
  }

  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error(`cannot start a node that is ${this.state}`);
    this.state = 'starting';
    await this.bindListeners();
    if (this.metrics !== null) this.metricsHttp = await this.metrics.listen(operatorHttp(this.env, METRICS_LISTENER_CONFIG));
    try {
      await this.brokerServer?.startUp();
      await this.shared.open();
      this.controllerServer?.attach();
      await this.shared.startRaft();
      // The leader writes a new cluster's bootstrap records and registers its controller; the other controllers register with it.
      if (this.controllerServer !== null) {
        if (this.shared.raft.isLeader) await this.controllerServer.activate(this.endpoints('controller'));
        else this.controllerServer.registerRemotely(this.controllerChannel(), this.endpoints('controller'));
      }
      await this.brokerServer?.register(this.endpoints('broker'));
      await this.shared.loader.publishFirst();
      await this.brokerServer?.unfence();
      this.shared.loader.markStarted();
      // Once the node serves, so the console's first page shows a registered, unfenced broker.
      this.consoleHttp = await startConsole(this.config, nodeConsoleSources(this), () => operatorHttp(this.env, CONSOLE_LISTENER_CONFIG));
      this.log.info(`node ${this.nodeId} (${[...this.roles].join(',')}): cluster ${this.shared.clusterId}, leader epoch ${this.shared.raft.leaderAndEpoch.epoch}, image at offset ${this.shared.loader.image.offset}`);
    } catch (error) {
      this.shared.loader.fail(error as Error);
      throw error;
    }
    this.state = 'running';
    if (this.haltReason !== null) {
      await this.stop();
      throw new Error(`node stopped during start: ${this.haltReason}`);
    }
  }

  private async bindListeners(): Promise<void> {
    const advertised = new Map(parseListeners(this.config.list('advertised.listeners')).map((l) => [l.name, l]));
    // Keystores load before anything binds, so a bad one stops the start with nothing to undo.
    const credentials = {
      scramCredentials: (user: string, mechanism: number) => this.shared.loader.image.scramCredentials.get(user)?.get(mechanism),
      random: this.env.random,
      clock: this.env.clock,
      timers: this.env.timers,
      onClose: (close: () => void) => this.securityClosers.push(close),
    };
    let securities: Awaited<ReturnType<typeof listenerSecurity>>[];
    try {
      securities = await Promise.all(this.listenerSpecs.map((spec) => listenerSecurity(this.config, spec, { fs: this.env.fs, credentials })));
    } catch (error) {
      this.closeSecurity();
      throw error;
    }
    for (const [index, spec] of this.listenerSpecs.entries()) {
      const host = spec.host || '0.0.0.0';
      let listener: Awaited<ReturnType<SocketServer['listen']>>;
      try {
        listener = await this.socketServer.listen(spec.name, host, spec.port, securities[index]);
      } catch (error) {
        // The listeners already bound would keep the process alive without serving: close them, and stop, as Kafka's broker exits.
        await this.socketServer.shutdown();
        this.closeSecurity();
        this.state = 'stopped';
        throw new ListenerBindError(spec.name, `${host}:${spec.port}`, error as Error);
      }
      const announced = advertised.get(spec.name);
      this.bound.push({
        ...spec,
        port: listener.port,
        advertisedHost: announced?.host || spec.host || '127.0.0.1',
        advertisedPort: announced?.port || listener.port,
      });
    }
  }

  /** The advertised endpoints of the listeners serving `role`, as registrations carry them. */
  private endpoints(role: ListenerRole): BrokerEndpoint[] {
    return this.bound
      .filter((listener) => this.handlers.roleOf(listener.name) === role)
      .map((listener) => ({
        name: listener.name,
        host: listener.advertisedHost,
        port: listener.advertisedPort,
        securityProtocol: SECURITY_PROTOCOL_IDS[listener.securityProtocol],
      }));
  }

  /** Kafka halts when the metadata log directory fails, or the last log directory does. */
  private onLogDirFailure(logDir: string): void {
    const live = this.config.logDirs.filter((dir) => !this.logDirFailureChannel.hasOfflineLogDir(dir));
    if (logDir === this.shared.metadataLogDir) {
      // Kafka halts here: no controlled shutdown through a metadata log that cannot be written.
      this.brokerServer?.abandonController();
      this.halt(`the metadata log directory ${logDir} has failed`);
    }
    else if (live.length === 0) this.halt(`all log directories (${this.config.logDirs.join(', ')}) have failed`);
  }

  private halt(reason: string): void {
    if (this.haltReason !== null) return;
    this.haltReason = reason;
    this.log.error(`shutting down the node: ${reason}`);
    this.resolveHalted(reason);
    if (this.state === 'running') this.stop().catch((error: unknown) => this.log.error(`stop after a log directory failure: ${String(error)}`));
  }

  /**
   * The broker's controlled shutdown alone: its leaderships move away while
   * it still serves (stop() begins with it). Nodes of one cluster that stop
   * together run theirs first, while every controller still serves, as
   * Kafka's test kit stops brokers before controllers.
   */
  async controlledShutdown(): Promise<void> {
    if (this.state === 'running') await this.brokerServer?.controlledShutdown();
  }

  async stop(): Promise<void> {
    if (this.state === 'stopped' || this.state === 'stopping') return;
    this.state = 'stopping';
    await this.consoleHttp?.close();
    await this.metricsHttp?.close();
    this.metricsHttp = null;
    this.metrics?.stop();
    await this.brokerServer?.controlledShutdown();
    this.brokerServer?.beginShutdown();
    // As Kafka's combined node: the broker stops first while the controller listeners still serve the quorum
    // (other nodes' controlled shutdowns need its votes and fetches), then the controller and Raft.
    const controllerListeners = new Set(this.config.list('controller.listener.names'));
    this.log.info('stopping: closing the broker listeners once their requests are answered');
    await this.socketServer.shutdownListeners(this.bound.map((l) => l.name).filter((name) => !controllerListeners.has(name)));
    this.log.info('stopping: the broker (coordinators, logs)');
    await this.brokerServer?.stop();
    this.controllerServer?.stop();
    this.rpcChannel?.close();
    this.log.info('stopping: the metadata log');
    await this.shared.stop();
    // Last, once Raft is closed: a request still waiting on it (a heartbeat waiting for its commit) has failed by now.
    await this.socketServer.shutdown();
    this.closeSecurity();
    this.log.info('stopped');
    this.state = 'stopped';
  }

  private closeSecurity(): void {
    for (const close of this.securityClosers.splice(0)) close();
  }

  get running(): boolean {
    return this.state === 'running';
  }
}
