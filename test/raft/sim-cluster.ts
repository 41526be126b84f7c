/**
 * A KRaft quorum in one process for tests: every node has its own simulated
 * disk, all share one ManualClock and a simulated network (src/io/sim-net.ts)
 * whose delays and losses come from a seeded generator, so a run is exactly
 * replayable from its seed. Time moves only through `runFor`/`runUntil`,
 * one millisecond at a time, letting every promise settle in between.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { ManualClock, SeededRandom } from '../../src/io/env.js';
import { SimFileSystem } from '../../src/io/sim-fs.js';
import { SimNetwork } from '../../src/io/sim-net.js';
import { QUORUM_CONFIG_DEFAULTS, type QuorumConfig } from '../../src/raft/quorum-config.js';
import { KafkaRaftClient } from '../../src/raft/raft-client.js';
import { SimRaftChannel, serveOnSimNetwork, type SimRaftMessage } from '../../src/raft/raft-channel.js';
import type { RaftControlRecord } from '../../src/raft/control-records.js';
import { RaftLog } from '../../src/raft/raft-log.js';
import { writeSnapshot } from '../../src/raft/snapshot.js';
import { VoterSet } from '../../src/raft/voter-set.js';
import { LOG_DIR, RecordingListener, textSerde } from './helpers.js';

export const CLUSTER_ID = 'c3Bvb2wtcmFmdC10ZXN0Lg';

export interface SimNode {
  id: number;
  fs: SimFileSystem;
  client: KafkaRaftClient<string> | null;
  listener: RecordingListener;
  log: RaftLog | null;
}

export class SimQuorum {
  readonly clock = new ManualClock(1_700_000_000_000);
  readonly random: SeededRandom;
  readonly network: SimNetwork<SimRaftMessage, SimRaftMessage>;
  readonly nodes = new Map<number, SimNode>();
  readonly config: QuorumConfig;

  constructor(
    readonly voters: readonly number[],
    options: { seed: number; config?: Partial<QuorumConfig>; retentionBytes?: number; dynamic?: boolean },
  ) {
    this.dynamic = options.dynamic ?? false;
    this.random = new SeededRandom(options.seed);
    this.network = new SimNetwork({ timers: this.clock, random: this.random, delayMsMin: 1, delayMsMax: 5 });
    this.config = { ...QUORUM_CONFIG_DEFAULTS, ...options.config };
    this.retentionBytes = options.retentionBytes ?? -1;
  }

  private readonly retentionBytes: number;
  /**
   * A dynamic quorum (kraft.version 1, KIP-853): every new disk gets a bootstrap snapshot 0-0 with a
   * KRaftVersionRecord, and for the initial `voters` a VotersRecord naming them; nodes start with no static
   * voters and find the leader through the initial voters as bootstrap servers.
   */
  private readonly dynamic: boolean;

  /** The controller endpoint node `id` announces (the simulated network routes by id; this is what VotersRecords carry). */
  static endpoint(id: number): { name: string; host: string; port: number } {
    return { name: 'CONTROLLER', host: '127.0.0.1', port: 9000 + id };
  }

  /** The directory id every node's metadata log has (fixed per node id). */
  static directoryId(id: number): string {
    return Buffer.alloc(16, id).toString('base64url');
  }

  /** Starts (or restarts, on the disk it had) node `id`; a voter when it is in `voters`, else an observer. */
  async start(id: number): Promise<SimNode> {
    const previous = this.nodes.get(id);
    const fs = previous?.fs ?? new SimFileSystem(new SeededRandom(this.random.nextInt(1 << 30)), this.clock);
    const env = { fs, clock: this.clock, timers: this.clock, random: new SeededRandom(this.random.nextInt(1 << 30)) };
    if (this.dynamic && previous === undefined) await this.writeBootstrapSnapshot(fs, { initialVoter: this.voters.includes(id) });
    const log = await RaftLog.open(env, { logDir: LOG_DIR, segmentBytes: 1024 * 1024, segmentMs: 604_800_000, retentionBytes: this.retentionBytes });
    const client = new KafkaRaftClient<string>({
      nodeId: id,
      voters: this.dynamic ? [] : this.voters,
      ...(this.dynamic ? { bootstrapServers: this.voters } : {}),
      directoryId: SimQuorum.directoryId(id),
      localEndpoint: SimQuorum.endpoint(id),
      log,
      serde: textSerde,
      env,
      channel: new SimRaftChannel(this.network, id, { requestTimeoutMs: this.config.requestTimeoutMs }),
      quorumConfig: this.config,
      clusterId: CLUSTER_ID,
      ...(process.env.SPOOL_RAFT_DEBUG ? { logger: { info: (m: string) => console.log(`[${this.clock.nowMs() - 1_700_000_000_000}] ${m}`), warn: (m: string) => console.log(m), error: (m: string) => console.log(m), debug: (m: string) => console.log(m) } } : {}),
    });
    const listener = new RecordingListener();
    client.register(listener);
    serveOnSimNetwork(this.network, id, (api, version, body) => client.handleRequest(api, version, body));
    const node: SimNode = { id, fs, client, listener, log };
    this.nodes.set(id, node);
    await client.start();
    return node;
  }

  /** As `storage format --initial-controllers` (an initial voter; the voters with their endpoints) or `--no-initial-controllers` (any other node). */
  private async writeBootstrapSnapshot(fs: SimFileSystem, options: { initialVoter: boolean }): Promise<void> {
    const dir = `${LOG_DIR}/__cluster_metadata-0`;
    await fs.mkdir(dir);
    const voters = VoterSet.of(this.voters.map((id) => ({ id, directoryId: SimQuorum.directoryId(id), endpoints: [SimQuorum.endpoint(id)], kraftVersionMin: 0, kraftVersionMax: 1 })));
    const kraftRecords: RaftControlRecord[] = [{ type: 'KRAFT_VERSION', data: { version: 0, kRaftVersion: 1 } }];
    if (options.initialVoter) kraftRecords.push({ type: 'KRAFT_VOTERS', data: voters.toVotersRecord() });
    await writeSnapshot(fs, dir, { id: { offset: 0, epoch: 0 }, lastContainedLogTimestamp: 0, records: [], kraftRecords }, { serde: textSerde, timestampMs: this.clock.nowMs() });
  }

  async startAll(ids: readonly number[] = this.voters): Promise<void> {
    for (const id of ids) await this.start(id);
  }

  /** kill -9: the node drops off the network at once and stops; its disk keeps what was synced (all of it unless `powerCut`). */
  async kill(id: number, options: { powerCut?: boolean } = {}): Promise<void> {
    const node = this.node(id);
    this.network.unregister(id);
    const client = node.client;
    node.client = null;
    await this.whileRunning(client!.close());
    if (options.powerCut === true) node.fs.crash({ keepUnsyncedPrefix: false });
  }

  /** A clean shutdown (a leader resigns with EndQuorumEpoch), then off the network. */
  async stop(id: number): Promise<void> {
    const node = this.node(id);
    const client = node.client!;
    node.client = null;
    await this.whileRunning(client.close());
    this.network.unregister(id);
  }

  node(id: number): SimNode {
    const node = this.nodes.get(id);
    if (node === undefined) throw new Error(`no node ${id}`);
    return node;
  }

  client(id: number): KafkaRaftClient<string> {
    const client = this.node(id).client;
    if (client === null) throw new Error(`node ${id} is down`);
    return client;
  }

  /** The running nodes that lead their epoch. */
  leaders(): number[] {
    return [...this.nodes.values()].filter((n) => n.client?.isLeader === true).map((n) => n.id);
  }

  /** The single leader, once every running voter follows it in its epoch. */
  agreedLeader(): number | null {
    const leaders = this.leaders();
    if (leaders.length !== 1) return null;
    const leader = this.client(leaders[0]!).leaderAndEpoch;
    const running = [...this.nodes.values()].filter((n) => n.client !== null);
    const agree = running.every((n) => n.client!.leaderAndEpoch.leaderId === leader.leaderId && n.client!.leaderAndEpoch.epoch === leader.epoch);
    return agree ? leader.leaderId : null;
  }

  async runFor(ms: number): Promise<void> {
    for (let i = 0; i < ms; i++) await this.tick();
  }

  /** Advances time until `done` holds; fails after `limitMs`. Returns the milliseconds it took. */
  async runUntil(done: () => boolean, limitMs: number, what = 'condition'): Promise<number> {
    for (let elapsedMs = 0; elapsedMs <= limitMs; elapsedMs++) {
      if (done()) return elapsedMs;
      await this.tick();
    }
    throw new Error(`${what} not reached within ${limitMs} ms (seed ${this.random.seed})`);
  }

  /** Keeps time moving until `operation` settles (a close that waits on the network). */
  async whileRunning<R>(operation: Promise<R>): Promise<R> {
    let settled = false;
    const tracked = operation.finally(() => {
      settled = true;
    });
    tracked.catch(() => undefined);
    while (!settled) await this.tick();
    return tracked;
  }

  async closeAll(): Promise<void> {
    for (const node of this.nodes.values()) if (node.client !== null) await this.stop(node.id);
  }

  private async tick(): Promise<void> {
    await nextTurn();
    this.clock.advance(1);
    await nextTurn();
  }
}
