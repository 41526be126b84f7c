/**
 * Three real Spool processes forming one cluster, as a user runs it: each
 * `spool start` with `process.roles=broker,controller`, its own node.id
 * (0, 1, 2), data dir and ports, the same `controller.quorum.voters` and
 * `cluster.id` (so each formats its directory on first start). They start
 * together (each waits for the quorum before it is ready) and stop together
 * with SIGTERM; every one must exit 0.
 *
 * Clients get only node 0's address as bootstrap: they must find the other
 * brokers (and the partition leaders on them) through Metadata.
 *
 * A node can be killed (kill -9) and started again on its data dir and
 * ports (`kill9`, `restart`), for failover tests.
 *
 * Test code, not product code: child processes and node:fs directly.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSpool, freePort, type SpoolProcess } from './spool-process.js';
import { randomBytes } from 'node:crypto';

export const CLUSTER_NODES = 3;

export interface SpoolCluster {
  /** Node 0's PLAINTEXT address. */
  bootstrap: string;
  /** Each node's PLAINTEXT address, by node id. */
  addresses: readonly string[];
  /** Each node's data dir, by node id. */
  dirs: readonly string[];
  /** Every node's output so far, for failure messages. */
  output(): string;
  /** kill -9 of node `id`: the process is gone, its data dir stays. */
  kill9(id: number): Promise<void>;
  /** Starts node `id` again on its data dir and ports (after kill9); resolves once it is ready. */
  restart(id: number): Promise<void>;
  /** SIGTERM to every running node at once; resolves with their exit codes. Removes the dirs. */
  stop(): Promise<(number | null)[]>;
}

export async function startSpoolCluster(options: { overrides?: readonly string[] } = {}): Promise<SpoolCluster> {
  const ids = Array.from({ length: CLUSTER_NODES }, (_, id) => id);
  const ports = await Promise.all(ids.map(async () => ({ port: await freePort(), controllerPort: await freePort() })));
  const dirs = ids.map(() => mkdtempSync(join(tmpdir(), 'spool-interop-')));
  const voters = ids.map((id) => `${id}@127.0.0.1:${ports[id]!.controllerPort}`).join(',');
  // A Kafka Uuid's text: 16 random bytes in URL-safe base64 without padding.
  const clusterId = randomBytes(16).toString('base64url');
  const removeDirs = (): void => { for (const dir of dirs) rmSync(dir, { recursive: true, force: true }); };
  const start = (id: number): Promise<SpoolProcess> => startSpool({
    dir: dirs[id]!,
    port: ports[id]!.port,
    controllerPort: ports[id]!.controllerPort,
    overrides: [
      `node.id=${id}`,
      'process.roles=broker,controller',
      `controller.quorum.voters=${voters}`,
      `cluster.id=${clusterId}`,
      // Internal topics with one replica per broker at most, as on a three-broker Kafka test cluster.
      'offsets.topic.replication.factor=3',
      'transaction.state.log.replication.factor=3',
      ...(options.overrides ?? []),
    ],
  });
  const started = await Promise.allSettled(ids.map(start));
  const nodes: (SpoolProcess | null)[] = started.map((s) => (s.status === 'fulfilled' ? s.value : null));
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed !== undefined) {
    await Promise.all(nodes.map((node) => node?.stop()));
    removeDirs();
    throw failed.reason;
  }
  /** Output of processes a kill -9 ended, kept for failure messages. */
  const earlier = ids.map(() => '');
  return {
    bootstrap: `127.0.0.1:${ports[0]!.port}`,
    addresses: ports.map(({ port }) => `127.0.0.1:${port}`),
    dirs,
    output: () => ids.map((id) => `---- node ${id}\n${earlier[id]}${nodes[id]?.output() ?? '(down)'}`).join('\n'),
    async kill9(id) {
      const node = nodes[id];
      if (node === null || node === undefined) return;
      await node.kill9();
      earlier[id] += `${node.output()}\n---- node ${id} killed (kill -9)\n`;
      nodes[id] = null;
    },
    async restart(id) {
      if (nodes[id] !== null) throw new Error(`node ${id} is running`);
      nodes[id] = await start(id);
    },
    async stop() {
      const codes = await Promise.all(nodes.map((node) => node?.stop() ?? null));
      removeDirs();
      return codes;
    },
  };
}
