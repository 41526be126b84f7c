/**
 * Controller failover time: how long a KRaft quorum of real processes takes
 * from kill -9 of the active controller to a new active controller, for
 * Spool and for Apache Kafka 4.4 under the same rounds.
 *
 *   npx tsc -p . && node dist/bench/controller-failover.js [--rounds N] [--shape controllers|combined]
 *        [--brokers spool,kafka] [--election-timeout-ms 1000] [--fetch-timeout-ms 2000]
 *
 * Three controller-only nodes (`--shape controllers`, the default) or three
 * combined nodes (`--shape combined`), with controller.quorum.voters and
 * Kafka's default quorum timeouts unless given (bench/lib/quorum.ts). With
 * both kinds given, rounds alternate between the two quorums (both run for
 * the whole bench), so a change in the machine's load hits both. Each round
 * waits until every voter has caught up, kills the leader with SIGKILL and
 * polls the survivors every 5 ms: "elected" is the first DescribeQuorum
 * answer naming a new leader; "active" is, on combined nodes, the first
 * CreateTopics the new leader commits (sent to its controller listener,
 * which Kafka's controllers also serve) and, on controller-only nodes (no
 * broker to place a topic on), the first answer with the new leader's high
 * watermark in its epoch (its LeaderChange committed by a majority, so its
 * controller is active). The killed node is then restarted on its data for
 * the next round. Prints one line per round and the min / median / max.
 *
 * What bounds it: the survivors notice the silence after
 * controller.quorum.fetch.timeout.ms, then need one pre-vote and one vote
 * round (and, when two stand at once, a randomised election timeout).
 *
 * Benchmark code, not product code: it uses timers, the clock and child
 * processes directly.
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { ErrorCode } from '../src/protocol/errors.js';
import { CreateTopics } from '../src/protocol/schemas/19-create-topics.js';
import { ask, median, poll, Quorum, type QuorumKind, type QuorumShape } from './lib/quorum.js';

const ARGS = parseArgs({
  options: {
    rounds: { type: 'string', default: '10' },
    shape: { type: 'string', default: 'controllers' },
    brokers: { type: 'string', default: 'spool,kafka' },
    'election-timeout-ms': { type: 'string', default: '1000' },
    'fetch-timeout-ms': { type: 'string', default: '2000' },
  },
}).values;

interface Figures {
  elected: number[];
  active: number[];
}

async function round(quorum: Quorum, index: number, figures: Figures): Promise<void> {
  const before = await poll(async () => {
    const found = await quorum.leader();
    return found?.caughtUp === true ? found : null;
  });
  const victim = quorum.nodes.find((n) => n.id === before.leaderId)!;
  const killedAt = performance.now();
  await quorum.kill9(victim);
  const after = await poll(async () => {
    const found = await quorum.leader();
    return found !== null && found.leaderId !== before.leaderId ? found : null;
  });
  const electedMs = performance.now() - killedAt;
  const successor = quorum.nodes.find((n) => n.id === after.leaderId)!;
  if (quorum.options.shape === 'combined') {
    // A topic needs brokers: the new active controller commits one.
    await poll(async () => {
      const created = await ask(successor.controllerPort, (c) =>
        c.send(CreateTopics, { topics: [{ name: `failover-${index}`, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false }),
      );
      return created?.topics[0]?.errorCode === ErrorCode.NONE ? true : null;
    });
  } else {
    // No brokers to place a topic on: the new leader's high watermark in its epoch (its LeaderChange committed, the controller active).
    await poll(async () => {
      const found = await quorum.leader();
      return found !== null && found.epoch === after.epoch && found.committed ? true : null;
    });
  }
  const activeMs = performance.now() - killedAt;
  figures.elected.push(electedMs);
  figures.active.push(activeMs);
  console.log(`${quorum.options.kind} round ${index}: leader ${before.leaderId} (epoch ${before.epoch}) killed; ${after.leaderId} elected in epoch ${after.epoch} after ${electedMs.toFixed(0)} ms, active after ${activeMs.toFixed(0)} ms (load ${loadavg()[0]!.toFixed(2)})`);
  await quorum.startNode(victim);
}

async function main(): Promise<void> {
  const shape = ARGS.shape as QuorumShape;
  const rounds = Number(ARGS.rounds);
  const kinds = ARGS.brokers.split(',') as QuorumKind[];
  const quorums = kinds.map((kind) => new Quorum({ kind, shape, electionTimeoutMs: Number(ARGS['election-timeout-ms']), fetchTimeoutMs: Number(ARGS['fetch-timeout-ms']) }));
  const figures = new Map(kinds.map((kind) => [kind, { elected: [], active: [] } as Figures]));
  console.log(`${shape}: 3 nodes each for ${kinds.join(', ')}, election timeout ${ARGS['election-timeout-ms']} ms, fetch timeout ${ARGS['fetch-timeout-ms']} ms; load before ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  try {
    for (const quorum of quorums) await quorum.start();
    for (let index = 1; index <= rounds; index++) {
      // Alternate which kind goes first, so neither always runs right after the other's restart.
      const order = index % 2 === 1 ? quorums : [...quorums].reverse();
      for (const quorum of order) await round(quorum, index, figures.get(quorum.options.kind)!);
    }
    const summary = (values: number[]) => `min ${Math.min(...values).toFixed(0)} / median ${median(values).toFixed(0)} / max ${Math.max(...values).toFixed(0)} ms`;
    for (const [kind, { elected, active }] of figures) console.log(`${kind}: elected ${summary(elected)}; active ${summary(active)}`);
    console.log(`load after ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  } finally {
    for (const quorum of quorums) await quorum.stop();
  }
}

await main();
