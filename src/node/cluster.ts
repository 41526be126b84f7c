/**
 * Embedded clusters for the tests of applications that use Kafka (Go has
 * kfake; Node had only Docker): `startCluster({ controllers: 3, brokers: 3 })`
 * or `startCluster({ combined: 3 })` starts real nodes in this process, on
 * loopback ports and temporary directories, formatted as kafka-storage.sh
 * formats a static quorum. Each node can be stopped (clean shutdown),
 * killed (as kill -9: no clean shutdown, nothing written after) and
 * restarted on the same ports and directories.
 *
 * Node ids follow Kafka's KafkaClusterTestKit: brokers and combined nodes
 * from 0, controller-only nodes from 3000. Controllers form one static
 * KRaft quorum (controller.quorum.voters), or with `dynamicQuorum` a
 * dynamic one (KIP-853: formatted as `--initial-controllers`, found by
 * controller.quorum.bootstrap.servers), which addController() grows by a
 * controller that follows the log as an observer until AddRaftVoter makes
 * it a voter; broker-only nodes follow the metadata log as observers. Every node talks to the active controller
 * over Kafka's wire, except a lone combined node (in-process).
 *
 * Settings differ from Kafka's defaults only where a test cluster wants it:
 * controller.quorum.election.timeout.ms is 50 ms (Kafka: 1 s, randomised
 * up to twice that), so a new quorum elects its first leader soon after the
 * nodes start (the voters wait for it before the first pre-vote: most of a
 * three-node cluster's start once was this wait) and a killed leader's
 * successor is found soon after the fetch timeout; still well above a vote's
 * round trip, fsyncs included, on a loaded machine (20 ms was not: votes
 * answered after the candidate's timeout, and elections went on for seconds);
 * group.initial.rebalance.delay.ms is 0; the internal topics' replication
 * factor is capped by the brokers there are. `config` overrides any.
 */
import { tmpdir } from 'node:os';
import { posix } from 'node:path';
import { BrokerConfig } from '../common/config.js';
import { silentLogger, type Logger } from '../common/logger.js';
import { realEnv, type Env, type FileSystem } from '../io/env.js';
import { unsyncedFileSystem } from '../io/fs.js';
import { randomUuid } from '../metadata/meta-properties.js';
import type { ListenerRole } from '../server/handler.js';
import { formatStorage, type InitialVoters } from './formatter.js';
import { killableEnv, type KillableEnv } from './killable-env.js';
import { SpoolNode } from './node.js';

/** KafkaClusterTestKit's first controller-only node id. */
const CONTROLLER_ID_BASE = 3000;
/** Kafka's default replication factor of the internal topics, capped by the brokers there are. */
const INTERNAL_TOPIC_REPLICATION_FACTOR = 3;
/** controller.quorum.election.timeout.ms of an embedded cluster: fast first elections. */
const ELECTION_TIMEOUT_MS = 50;
/** How often the directories' removal is tried when a killed node's last write races it. */
const REMOVE_ATTEMPTS_MAX = 5;
/** Kafka's default min ISR of __transaction_state (and of __share_group_state), capped likewise. */
const TRANSACTION_LOG_MIN_ISR = 2;

export interface StartClusterOptions {
  /** Nodes with both roles (process.roles=broker,controller). Default 1 when no other node is asked for. */
  combined?: number;
  /** Controller-only nodes. */
  controllers?: number;
  /** Broker-only nodes. */
  brokers?: number;
  /**
   * A dynamic quorum (kraft.version 1, KIP-853): the controllers are formatted as
   * `kafka-storage.sh format --initial-controllers` and every node finds them by
   * controller.quorum.bootstrap.servers. Default: static voters (controller.quorum.voters).
   */
  dynamicQuorum?: boolean;
  /** `kafka-storage.sh format --feature name=level` for every node (eligible.leader.replicas.version, say). */
  features?: ReadonlyMap<string, number>;
  /** Kafka properties for every node, over the cluster's own (ports, directories, quorum). */
  config?: Record<string, string | number | boolean>;
  /** Kafka properties of one node, over `config` (broker.rack, say). */
  nodeConfig?: (nodeId: number) => Record<string, string | number | boolean>;
  env?: Env;
  /**
   * Each node's own environment (its disk, its host on a simulated network), for the simulator; default `env`.
   * Formatting and the final removal of a node's directory go through it.
   */
  nodeEnv?: (nodeId: number) => Env;
  /** Each node's logger; default silent. */
  logger?: (nodeId: number) => Logger;
  /**
   * false: no fsync at all (the metadata quorum's, the partition logs', the
   * checkpoints'), for tests that start many clusters. Everything written
   * still reaches the page cache, so a kill() or a crash of this process loses
   * nothing; a power cut or an OS crash may lose what the quorum acknowledged,
   * which Kafka's KRaft does not allow. Default true: every fsync Kafka does.
   */
  durable?: boolean;
}

interface NodePlan {
  nodeId: number;
  roles: readonly ListenerRole[];
  brokerPort: number | null;
  controllerPort: number | null;
  logDir: string;
  /** directory.id of its metadata log directory (a dynamic quorum's voters are named by it). */
  directoryId: string;
}

/** One node of an embedded cluster, across its restarts. */
export class EmbeddedNode {
  private incarnation: { node: SpoolNode; killable: KillableEnv } | null = null;
  private starting = false;

  constructor(
    readonly nodeId: number,
    readonly roles: readonly ListenerRole[],
    private readonly config: BrokerConfig,
    private readonly options: { env: Env; logger: Logger },
  ) {}

  /** The running incarnation (the last one, once stopped or killed). */
  get node(): SpoolNode {
    if (this.incarnation === null) throw new Error(`node ${this.nodeId} was never started`);
    return this.incarnation.node;
  }

  get running(): boolean {
    return this.incarnation !== null && this.incarnation.node.running && !this.incarnation.killable.killed;
  }

  /** `host:port` of its broker listener, or null for a controller-only node. */
  get bootstrapServer(): string | null {
    const listeners = this.config.list('listeners').filter((listener) => listener.startsWith('PLAINTEXT://'));
    return listeners[0]?.slice('PLAINTEXT://'.length) ?? null;
  }

  /** Starts a new incarnation; it rejects if the node is killed before it is ready. */
  async start(): Promise<void> {
    if (this.starting || this.running) throw new Error(`node ${this.nodeId} is ${this.starting ? 'starting' : 'running'}`);
    const killable = killableEnv(this.options.env);
    const node = new SpoolNode(this.config, killable.env, this.options.logger);
    this.incarnation = { node, killable };
    const killedWhileStarting = killable.whenKilled.then(() => {
      throw new Error(`node ${this.nodeId} was killed while it started`);
    });
    this.starting = true;
    try {
      await Promise.race([node.start(), killedWhileStarting]);
    } catch (error) {
      // A failed start leaves nothing behind: its ports and files are released as a dead process's are.
      await killable.kill();
      throw error;
    } finally {
      this.starting = false;
    }
  }

  /** A clean shutdown (controlled shutdown of a broker, checkpoints, clean-shutdown markers). */
  async stop(): Promise<void> {
    if (this.running) await this.node.stop();
  }

  /** As kill -9 (also while it starts): the node stops where it is, without a clean shutdown; its ports are free at once. */
  async kill(): Promise<void> {
    if (this.incarnation !== null && !this.incarnation.killable.killed) await this.incarnation.killable.kill();
  }

  /** Stops the node if it runs, and starts a new incarnation on the same ports and directories. */
  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }
}

export interface RunningCluster {
  clusterId: string;
  /** The brokers' `host:port`, for a client's bootstrap.servers. */
  bootstrapServers: string;
  nodes: readonly EmbeddedNode[];
  node(nodeId: number): EmbeddedNode;
  /** The node whose controller is active (the Raft leader, as a running controller knows it), or null while none is known. */
  activeController(): EmbeddedNode | null;
  /**
   * Dynamic quorum only: formats a new controller-only node as
   * `kafka-storage.sh format --no-initial-controllers` and starts it; it
   * follows the log as an observer until an AddRaftVoter names it. With
   * `start: false` the node is formatted and returned unstarted, so that a
   * caller may watch it from its first incarnation's start.
   */
  addController(options?: { start?: boolean }): Promise<EmbeddedNode>;
  /** The directory.id of a started node's metadata log directory (what AddRaftVoter and RemoveRaftVoter name). */
  directoryId(nodeId: number): string;
  /** Stops every running node (brokers first), then deletes the directories. */
  stop(): Promise<void>;
}

export async function startCluster(options: StartClusterOptions = {}): Promise<RunningCluster> {
  const env = options.env ?? realEnv;
  const counts = nodeCounts(options);
  const root = posix.join(tmpdir(), `spool-cluster-${randomUuid(env.random)}`);
  const plans = await planNodes(env, counts, root);
  const brokers = Math.max(1, counts.combined + counts.brokers);
  const clusterId = randomUuid(env.random);
  const dynamic = options.dynamicQuorum === true;
  const initialControllers = plans.filter((p) => p.controllerPort !== null);
  const nodes: EmbeddedNode[] = [];
  const fileSystems = new Set([env.fs]);
  const addNode = async (plan: NodePlan, initialVoters: InitialVoters): Promise<EmbeddedNode> => {
    const overrides = { ...options.config, ...options.nodeConfig?.(plan.nodeId) };
    const config = nodeConfig(plan, initialControllers, { brokers, overrides, dynamic });
    const ownEnv = options.nodeEnv?.(plan.nodeId) ?? env;
    fileSystems.add(ownEnv.fs);
    const nodeEnv = withDurability(ownEnv, options.durable ?? true);
    await formatStorage(nodeEnv, config, { clusterId, initialVoters, ignoreFormatted: false, ...(options.features !== undefined ? { features: options.features } : {}) });
    const node = new EmbeddedNode(plan.nodeId, plan.roles, config, { env: nodeEnv, logger: options.logger?.(plan.nodeId) ?? silentLogger });
    nodes.push(node);
    return node;
  };
  const removeDirectories = () => Promise.all([...fileSystems].map((fs) => removeRoot(fs, root)));
  for (const plan of plans) await addNode(plan, initialVotersOf(plan, initialControllers, dynamic));
  const cluster: RunningCluster = {
    clusterId,
    bootstrapServers: nodes.map((node) => node.bootstrapServer).filter((address) => address !== null).join(','),
    nodes,
    node(nodeId) {
      const found = nodes.find((node) => node.nodeId === nodeId);
      if (found === undefined) throw new Error(`no node ${nodeId} in this cluster`);
      return found;
    },
    activeController() {
      for (const node of nodes) {
        if (!node.running || !node.roles.includes('controller')) continue;
        const leaderId = node.node.shared.raftLeaderId;
        const leader = nodes.find((candidate) => candidate.nodeId === leaderId);
        if (leader?.running) return leader;
      }
      return null;
    },
    async addController({ start = true } = {}) {
      if (!dynamic) throw new Error('addController needs a dynamic quorum (startCluster({ dynamicQuorum: true }))');
      const nodeId = Math.max(CONTROLLER_ID_BASE - 1, ...plans.map((p) => p.nodeId)) + 1;
      const plan = await planNode(env, { nodeId, roles: ['controller'], root });
      plans.push(plan);
      const node = await addNode(plan, { kind: 'none' });
      if (start) await node.start();
      return node;
    },
    directoryId(nodeId) {
      // The metadata log directory is log.dirs' only one; its meta.properties names it.
      return cluster.node(nodeId).node.shared.logDirIds[0]!;
    },
    async stop() {
      // Every broker's controlled shutdown while the whole quorum serves, then broker-only nodes, then the rest.
      await Promise.all(nodes.filter((node) => node.running).map((node) => node.node.controlledShutdown()));
      await Promise.all(nodes.filter((node) => !node.roles.includes('controller')).map((node) => node.stop()));
      await Promise.all(nodes.map((node) => node.stop()));
      await removeDirectories();
    },
  };
  try {
    await Promise.all(nodes.map((node) => node.start()));
  } catch (error) {
    // Nodes that did not start are killed where they are; the first failure is the one reported.
    await Promise.all(nodes.map((node) => node.kill().catch(() => undefined)));
    await removeDirectories().catch(() => undefined);
    throw error;
  }
  return cluster;
}

function withDurability(env: Env, durable: boolean): Env {
  return durable ? env : { ...env, fs: unsyncedFileSystem(env.fs) };
}

/** Like fs.rm's maxRetries: a killed node's last call, already in the kernel, may still create a file in a directory being removed. */
async function removeRoot(fs: FileSystem, root: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fs.removeTree(root);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOTEMPTY' || attempt === REMOVE_ATTEMPTS_MAX) throw error;
    }
  }
}

function nodeCounts(options: StartClusterOptions): { combined: number; controllers: number; brokers: number } {
  const controllers = options.controllers ?? 0;
  const brokers = options.brokers ?? 0;
  const combined = options.combined ?? (controllers === 0 && brokers === 0 ? 1 : 0);
  if (combined + controllers === 0) throw new Error('a cluster needs a controller: ask for combined or controllers nodes');
  if (combined + brokers === 0) throw new Error('a cluster needs a broker: ask for combined or brokers nodes');
  return { combined, controllers, brokers };
}

/** Node ids, roles, loopback ports (reserved now, so the quorum's voters can name them) and directories. */
async function planNodes(env: Env, counts: { combined: number; controllers: number; brokers: number }, root: string): Promise<NodePlan[]> {
  const plans: NodePlan[] = [];
  const add = async (nodeId: number, roles: readonly ListenerRole[]) => {
    plans.push(await planNode(env, { nodeId, roles, root }));
  };
  for (let i = 0; i < counts.combined; i++) await add(i, ['broker', 'controller']);
  for (let i = 0; i < counts.brokers; i++) await add(counts.combined + i, ['broker']);
  for (let i = 0; i < counts.controllers; i++) await add(CONTROLLER_ID_BASE + i, ['controller']);
  return plans;
}

async function planNode(env: Env, options: { nodeId: number; roles: readonly ListenerRole[]; root: string }): Promise<NodePlan> {
  const { nodeId, roles } = options;
  const brokerPort = roles.includes('broker') ? await reservePort(env) : null;
  const controllerPort = roles.includes('controller') ? await reservePort(env) : null;
  return { nodeId, roles, brokerPort, controllerPort, logDir: posix.join(options.root, `node-${nodeId}`), directoryId: randomUuid(env.random) };
}

/** How kafka-storage.sh format is told the quorum: static, or the initial controllers (a controller) or none (a broker). */
function initialVotersOf(plan: NodePlan, initialControllers: readonly NodePlan[], dynamic: boolean): InitialVoters {
  if (!dynamic) return { kind: 'static' };
  if (plan.controllerPort === null) return { kind: 'none' };
  return {
    kind: 'initial',
    controllers: initialControllers.map((p) => ({ id: p.nodeId, host: '127.0.0.1', port: p.controllerPort!, directoryId: p.directoryId })),
  };
}

/** A free loopback port: bound, then released for the node to bind. */
async function reservePort(env: Env): Promise<number> {
  const listener = await env.net.listen({ host: '127.0.0.1', port: 0, onAcceptError: () => undefined }, (connection) => connection.destroy());
  const port = listener.port;
  await listener.close();
  return port;
}

function nodeConfig(
  plan: NodePlan,
  controllers: readonly NodePlan[],
  options: { brokers: number; overrides: Record<string, string | number | boolean>; dynamic: boolean },
): BrokerConfig {
  const listeners = [
    ...(plan.brokerPort === null ? [] : [`PLAINTEXT://127.0.0.1:${plan.brokerPort}`]),
    ...(plan.controllerPort === null ? [] : [`CONTROLLER://127.0.0.1:${plan.controllerPort}`]),
  ];
  const voters = controllers.map((p) => `${p.nodeId}@127.0.0.1:${p.controllerPort}`);
  const bootstrapServers = controllers.map((p) => `127.0.0.1:${p.controllerPort}`);
  const replicationFactor = Math.min(INTERNAL_TOPIC_REPLICATION_FACTOR, options.brokers);
  return BrokerConfig.fromObject({
    'controller.quorum.election.timeout.ms': ELECTION_TIMEOUT_MS,
    'offsets.topic.replication.factor': replicationFactor,
    'transaction.state.log.replication.factor': replicationFactor,
    'transaction.state.log.min.isr': Math.min(TRANSACTION_LOG_MIN_ISR, replicationFactor),
    'share.coordinator.state.topic.replication.factor': replicationFactor,
    'share.coordinator.state.topic.min.isr': Math.min(TRANSACTION_LOG_MIN_ISR, replicationFactor),
    'group.initial.rebalance.delay.ms': 0,
    ...options.overrides,
    'process.roles': plan.roles.join(','),
    'node.id': plan.nodeId,
    listeners: listeners.join(','),
    'controller.listener.names': 'CONTROLLER',
    ...(options.dynamic ? { 'controller.quorum.bootstrap.servers': bootstrapServers.join(',') } : { 'controller.quorum.voters': voters.join(',') }),
    'log.dirs': plan.logDir,
  });
}
