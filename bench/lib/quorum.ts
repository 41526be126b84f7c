/**
 * A three-node KRaft quorum of real processes for the cluster benchmarks
 * (bench/controller-failover.ts, bench/metadata-ops.ts): Spool
 * (`spool start`, test/interop/clients/spool-process.ts) or Apache Kafka 4.4
 * (kafka.sh start-config, test/interop/kafka/kafka.ts), with the same
 * static voters (controller.quorum.voters), the same cluster id and the same
 * quorum timeouts. Three controller-only nodes (`controllers`) or three
 * combined broker,controller nodes (`combined`). Each node can be killed
 * with SIGKILL and started again on its data.
 *
 * Benchmark code, not product code: it uses child processes, signals and
 * the clock directly.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BrokerConnection } from '../../src/client/connection.js';
import { realEnv } from '../../src/io/env.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { DescribeQuorum } from '../../src/protocol/schemas/55-describe-quorum.js';
import { Metadata } from '../../src/protocol/schemas/03-metadata.js';
import { startSpool } from '../../test/interop/clients/spool-process.js';
import { processAlive } from './proc.js';
import { freePort, startKafkaNode } from '../../test/interop/kafka/kafka.js';

export type QuorumKind = 'spool' | 'kafka';
export type QuorumShape = 'controllers' | 'combined';

export interface QuorumOptions {
  kind: QuorumKind;
  shape: QuorumShape;
  electionTimeoutMs: number;
  fetchTimeoutMs: number;
  /** Spool only: `node --cpu-prof` into this directory (profiles are written at a clean stop). */
  cpuProfileDir?: string;
}

export interface QuorumNode {
  id: number;
  /** PLAINTEXT (combined nodes only). */
  port: number;
  controllerPort: number;
  dir: string;
}

export interface QuorumView {
  leaderId: number;
  epoch: number;
  /** The leader knows a high watermark (in its epoch: its LeaderChange is committed by a majority). */
  committed: boolean;
  /** Every voter's log end offset has reached the high watermark. */
  caughtUp: boolean;
}

interface Running {
  pid: number;
  /** Clean stop (SIGTERM, waits). */
  stop(): Promise<void>;
  /** SIGKILL, waits until gone. */
  kill9(): Promise<void>;
}

const CLUSTER_ID = 'MkU3OEVBNTcwNTJENDM2Qg';
const POLL_MS = 5;
/** Kafka's JVMs: three run at once on a small machine. */
const KAFKA_HEAP = '-Xms256m -Xmx768m';

/** One request on a fresh connection; null if the node does not answer within `requestTimeoutMs`. */
export async function ask<T>(port: number, operation: (connection: BrokerConnection) => Promise<T>, requestTimeoutMs = 2000): Promise<T | null> {
  let connection: BrokerConnection | null = null;
  try {
    connection = await BrokerConnection.connect({ host: '127.0.0.1', port, env: realEnv, requestTimeoutMs });
    return await operation(connection);
  } catch {
    return null;
  } finally {
    connection?.destroy();
  }
}

/** Calls `probe` every POLL_MS until it returns a value. */
export async function poll<T>(probe: () => Promise<T | null>): Promise<T> {
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    await sleep(POLL_MS);
  }
}

export const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export class Quorum {
  readonly nodes: QuorumNode[] = [];
  private readonly running = new Map<number, Running>();
  private voters = '';

  constructor(readonly options: QuorumOptions) {}

  /** Allocates ports and directories and starts the three nodes at once (a quorum needs a majority up to start). */
  async start(): Promise<void> {
    for (const id of [1, 2, 3]) {
      this.nodes.push({ id, port: await freePort(), controllerPort: await freePort(), dir: mkdtempSync(join(tmpdir(), `bench-quorum-${this.options.kind}-${id}-`)) });
    }
    this.voters = this.nodes.map((n) => `${n.id}@127.0.0.1:${n.controllerPort}`).join(',');
    await Promise.all(this.nodes.map((node) => this.startNode(node)));
  }

  isRunning(node: QuorumNode): boolean {
    return this.running.has(node.id);
  }

  pid(node: QuorumNode): number {
    return this.running.get(node.id)!.pid;
  }

  async startNode(node: QuorumNode): Promise<void> {
    this.running.set(node.id, this.options.kind === 'kafka' ? await this.startKafka(node) : await this.startSpool(node));
  }

  async kill9(node: QuorumNode): Promise<void> {
    const running = this.running.get(node.id);
    this.running.delete(node.id);
    await running?.kill9();
  }

  /** Stops every node cleanly (Spool writes its CPU profiles then) and removes the directories. */
  async stop(): Promise<void> {
    await Promise.all(this.nodes.map(async (node) => {
      const running = this.running.get(node.id);
      this.running.delete(node.id);
      await running?.stop().catch(() => running.kill9());
    }));
    for (const node of this.nodes) rmSync(node.dir, { recursive: true, force: true });
  }

  /** DescribeQuorum from the running nodes' controller listeners: the first answer without an error (only the leader gives one). */
  async leader(): Promise<QuorumView | null> {
    for (const node of this.nodes) {
      if (!this.isRunning(node)) continue;
      const described = await ask(node.controllerPort, (c) => c.send(DescribeQuorum, { topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] }));
      const p = described?.topics[0]?.partitions[0];
      if (described?.errorCode === ErrorCode.NONE && p?.errorCode === ErrorCode.NONE) {
        return {
          leaderId: p.leaderId,
          epoch: p.leaderEpoch,
          committed: Number(p.highWatermark) >= 0,
          caughtUp: p.currentVoters.every((v) => Number(v.logEndOffset) >= Number(p.highWatermark)),
        };
      }
    }
    return null;
  }

  /** Combined nodes: waits until every broker's Metadata lists the three brokers (registered and unfenced). */
  async brokersReady(): Promise<void> {
    for (const node of this.nodes) {
      await poll(async () => {
        const metadata = await ask(node.port, (c) => c.send(Metadata, { topics: [], allowAutoTopicCreation: false }));
        return metadata !== null && metadata.brokers.length === this.nodes.length ? true : null;
      });
    }
  }

  private roleLines(node: QuorumNode): { roles: string; listeners: string } {
    const combined = this.options.shape === 'combined';
    return {
      roles: combined ? 'broker,controller' : 'controller',
      listeners: combined ? `PLAINTEXT://127.0.0.1:${node.port},CONTROLLER://127.0.0.1:${node.controllerPort}` : `CONTROLLER://127.0.0.1:${node.controllerPort}`,
    };
  }

  private async startSpool(node: QuorumNode): Promise<Running> {
    const { roles, listeners } = this.roleLines(node);
    const spool = await startSpool({
      dir: node.dir,
      listeners,
      nodeArgs: this.options.cpuProfileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${this.options.cpuProfileDir}`],
      overrides: [
        `node.id=${node.id}`,
        `process.roles=${roles}`,
        `controller.quorum.voters=${this.voters}`,
        `cluster.id=${CLUSTER_ID}`,
        `controller.quorum.election.timeout.ms=${this.options.electionTimeoutMs}`,
        `controller.quorum.fetch.timeout.ms=${this.options.fetchTimeoutMs}`,
      ],
    });
    return { pid: spool.pid, stop: async () => void (await spool.stop({ keepDir: true })), kill9: () => spool.kill9() };
  }

  private async startKafka(node: QuorumNode): Promise<Running> {
    const { roles, listeners } = this.roleLines(node);
    const combined = this.options.shape === 'combined';
    process.env.KAFKA_HEAP_OPTS ??= KAFKA_HEAP;
    const kafka = await startKafkaNode({
      dir: node.dir,
      // The controller listener opens before the quorum has a leader; a broker's waits until it is unfenced.
      port: node.controllerPort,
      clusterId: CLUSTER_ID,
      properties: [
        `process.roles=${roles}`,
        `node.id=${node.id}`,
        `controller.quorum.voters=${this.voters}`,
        `listeners=${listeners}`,
        ...(combined ? [`advertised.listeners=PLAINTEXT://127.0.0.1:${node.port}`, 'inter.broker.listener.name=PLAINTEXT'] : []),
        'controller.listener.names=CONTROLLER',
        'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
        `controller.quorum.election.timeout.ms=${this.options.electionTimeoutMs}`,
        `controller.quorum.fetch.timeout.ms=${this.options.fetchTimeoutMs}`,
      ],
    });
    return {
      pid: kafka.pid,
      stop: () => kafka.stop({ keepDir: true }),
      kill9: async () => {
        process.kill(kafka.pid, 'SIGKILL');
        await poll(async () => (processAlive(kafka.pid) ? null : true));
      },
    };
  }
}
