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
 * Test code, not product code: child processes and node:fs directly.
 */
import { startSpool, freePort, type SpoolProcess } from './spool-process.js';
import { randomBytes } from 'node:crypto';

export const CLUSTER_NODES = 3;

export interface SpoolCluster {
  /** Node 0's PLAINTEXT address. */
  bootstrap: string;
  /** Each node's data dir, by node id. */
  dirs: readonly string[];
  /** Every node's output so far, for failure messages. */
  output(): string;
  /** SIGTERM to every node at once; resolves with their exit codes. Removes the dirs. */
  stop(): Promise<(number | null)[]>;
}

export async function startSpoolCluster(options: { overrides?: readonly string[] } = {}): Promise<SpoolCluster> {
  const ids = Array.from({ length: CLUSTER_NODES }, (_, id) => id);
  const ports = await Promise.all(ids.map(async () => ({ port: await freePort(), controllerPort: await freePort() })));
  const voters = ids.map((id) => `${id}@127.0.0.1:${ports[id]!.controllerPort}`).join(',');
  // A Kafka Uuid's text: 16 random bytes in URL-safe base64 without padding.
  const clusterId = randomBytes(16).toString('base64url');
  const started = await Promise.allSettled(ids.map((id) =>
    startSpool({
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
    }),
  ));
  const nodes = started.filter((s): s is PromiseFulfilledResult<SpoolProcess> => s.status === 'fulfilled').map((s) => s.value);
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed !== undefined) {
    await Promise.all(nodes.map((node) => node.stop()));
    throw failed.reason;
  }
  return {
    bootstrap: nodes[0]!.bootstrap,
    dirs: nodes.map((node) => node.dir),
    output: () => nodes.map((node, id) => `---- node ${id}\n${node.output()}`).join('\n'),
    stop: () => Promise.all(nodes.map((node) => node.stop())),
  };
}
