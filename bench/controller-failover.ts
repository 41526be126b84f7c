/**
 * Controller failover time: how long a KRaft quorum of real Spool processes
 * takes from kill -9 of the active controller to a new active controller.
 *
 *   npx tsc -p . && node dist/bench/controller-failover.js [--rounds N] [--shape controllers|combined]
 *        [--election-timeout-ms 1000] [--fetch-timeout-ms 2000]
 *
 * Three controller-only nodes (`--shape controllers`, the default) or three
 * combined nodes (`--shape combined`), with controller.quorum.voters and
 * Kafka's default quorum timeouts unless given. Each round waits until every
 * voter has caught up, kills the leader with SIGKILL and polls the survivors
 * every 5 ms: "elected" is the first DescribeQuorum answer naming a new
 * leader; "active" is, on combined nodes, the first CreateTopics the new
 * leader commits and, on controller-only nodes (no broker to place a topic
 * on), the first answer with the new leader's high watermark in its epoch
 * (its LeaderChange committed by a majority, so its controller is active). The killed node is then
 * restarted on its data for the next round. Prints one line per round and
 * the min / median / max.
 *
 * What bounds it: the survivors notice the silence after
 * controller.quorum.fetch.timeout.ms, then need one pre-vote and one vote
 * round (and, when two stand at once, a randomised election timeout).
 *
 * Benchmark code, not product code: it uses timers, the clock and child
 * processes directly.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { BrokerConnection } from '../src/client/connection.js';
import { realEnv } from '../src/io/env.js';
import { ErrorCode } from '../src/protocol/errors.js';
import { CreateTopics } from '../src/protocol/schemas/19-create-topics.js';
import { DescribeQuorum } from '../src/protocol/schemas/55-describe-quorum.js';
import { freePort, startSpool, type SpoolProcess } from '../test/interop/clients/spool-process.js';

const ARGS = parseArgs({
  options: {
    rounds: { type: 'string', default: '10' },
    shape: { type: 'string', default: 'controllers' },
    'election-timeout-ms': { type: 'string', default: '1000' },
    'fetch-timeout-ms': { type: 'string', default: '2000' },
  },
}).values;
const POLL_MS = 5;
const CLUSTER_ID = 'MkU3OEVBNTcwNTJENDM2Qg';

interface Node {
  id: number;
  port: number;
  controllerPort: number;
  dir: string;
  process: SpoolProcess | null;
}

async function ask<T>(port: number, operation: (connection: BrokerConnection) => Promise<T>): Promise<T | null> {
  let connection: BrokerConnection | null = null;
  try {
    connection = await BrokerConnection.connect({ host: '127.0.0.1', port, env: realEnv, requestTimeoutMs: 2000 });
    return await operation(connection);
  } catch {
    return null;
  } finally {
    connection?.destroy();
  }
}

async function leader(nodes: readonly Node[]): Promise<{ leaderId: number; epoch: number; committed: boolean; caughtUp: boolean } | null> {
  for (const node of nodes) {
    if (node.process === null) continue;
    const described = await ask(node.controllerPort, (c) => c.send(DescribeQuorum, { topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] }));
    const p = described?.topics[0]?.partitions[0];
    if (p?.errorCode === ErrorCode.NONE) {
      return { leaderId: p.leaderId, epoch: p.leaderEpoch, committed: Number(p.highWatermark) >= 0, caughtUp: p.currentVoters.every((v) => Number(v.logEndOffset) >= Number(p.highWatermark)) };
    }
  }
  return null;
}

async function poll<T>(probe: () => Promise<T | null>): Promise<T> {
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    await sleep(POLL_MS);
  }
}

function start(node: Node, voters: string, combined: boolean): Promise<SpoolProcess> {
  const listeners = combined ? `PLAINTEXT://127.0.0.1:${node.port},CONTROLLER://127.0.0.1:${node.controllerPort}` : `CONTROLLER://127.0.0.1:${node.controllerPort}`;
  return startSpool({
    dir: node.dir,
    listeners,
    overrides: [
      `node.id=${node.id}`,
      `process.roles=${combined ? 'broker,controller' : 'controller'}`,
      `controller.quorum.voters=${voters}`,
      `cluster.id=${CLUSTER_ID}`,
      `controller.quorum.election.timeout.ms=${ARGS['election-timeout-ms']}`,
      `controller.quorum.fetch.timeout.ms=${ARGS['fetch-timeout-ms']}`,
    ],
  });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  const combined = ARGS.shape === 'combined';
  const rounds = Number(ARGS.rounds);
  const nodes: Node[] = [];
  for (const id of [1, 2, 3]) nodes.push({ id, port: await freePort(), controllerPort: await freePort(), dir: mkdtempSync(join(tmpdir(), `spool-failover-${id}-`)), process: null });
  const voters = nodes.map((n) => `${n.id}@127.0.0.1:${n.controllerPort}`).join(',');
  const elected: number[] = [];
  const active: number[] = [];
  try {
    const started = await Promise.all(nodes.map((node) => start(node, voters, combined)));
    started.forEach((process, i) => (nodes[i]!.process = process));
    console.log(`${ARGS.shape}: 3 nodes, election timeout ${ARGS['election-timeout-ms']} ms, fetch timeout ${ARGS['fetch-timeout-ms']} ms`);
    for (let round = 1; round <= rounds; round++) {
      const before = await poll(async () => {
        const found = await leader(nodes);
        return found?.caughtUp === true ? found : null;
      });
      const victim = nodes.find((n) => n.id === before.leaderId)!;
      const killedAt = performance.now();
      await victim.process!.kill9();
      victim.process = null;
      const after = await poll(async () => {
        const found = await leader(nodes);
        return found !== null && found.leaderId !== before.leaderId ? found : null;
      });
      const electedMs = performance.now() - killedAt;
      const successor = nodes.find((n) => n.id === after.leaderId)!;
      if (combined) {
        // A topic needs brokers: the new active controller commits one.
        await poll(async () => {
          const created = await ask(successor.controllerPort, (c) =>
            c.send(CreateTopics, { topics: [{ name: `failover-${round}`, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false }),
          );
          return created?.topics[0]?.errorCode === ErrorCode.NONE ? true : null;
        });
      } else {
        // No brokers to place a topic on: the new leader's high watermark in its epoch (its LeaderChange committed, the controller active).
        await poll(async () => {
          const found = await leader(nodes);
          return found !== null && found.epoch === after.epoch && found.committed ? true : null;
        });
      }
      const activeMs = performance.now() - killedAt;
      elected.push(electedMs);
      active.push(activeMs);
      console.log(`round ${round}: leader ${before.leaderId} (epoch ${before.epoch}) killed; ${after.leaderId} elected in epoch ${after.epoch} after ${electedMs.toFixed(0)} ms, active after ${activeMs.toFixed(0)} ms`);
      victim.process = await start(victim, voters, combined);
    }
    const summary = (values: number[]) => `min ${Math.min(...values).toFixed(0)} / median ${median(values).toFixed(0)} / max ${Math.max(...values).toFixed(0)} ms`;
    console.log(`elected: ${summary(elected)}`);
    console.log(`active:  ${summary(active)}`);
  } finally {
    for (const node of nodes) await node.process?.kill9();
    for (const node of nodes) rmSync(node.dir, { recursive: true, force: true });
  }
}

await main();
