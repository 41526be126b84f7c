/**
 * A whole Spool node on simulated io for storage fault and crash tests: the
 * SimFileSystem disk, a ManualClock, seeded randomness, and a network whose
 * listeners accept nothing (the tests call the rooms directly, no sockets).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { ManualClock, SeededRandom } from '../../src/io/env.js';
import type { Network } from '../../src/io/net.js';
import type { SimFileSystem } from '../../src/io/sim-fs.js';
import { SpoolNode } from '../../src/node/node.js';
import { BrokerConfig, SINGLE_NODE_DEFAULTS } from '../../src/common/config.js';
import { silentLogger, type Logger } from '../../src/common/logger.js';

export const SIM_LOG_DIR = '/kafka-logs';

/** Listeners bind nowhere; connecting fails. Enough for a node whose requests come in by method call. */
export const unreachableNetwork: Network = {
  async listen(options) {
    return { host: options.host, port: options.port === 0 ? 9092 : options.port, close: async () => undefined };
  },
  async connect(options) {
    throw new Error(`no network in this simulation (connect to ${options.host}:${options.port})`);
  },
};

export interface SimNode {
  broker: SpoolNode;
  clock: ManualClock;
}

/** A node with `config` over Kafka's single-node defaults, on `fs`, its clock starting at `startMs`. */
export function simBroker(
  fs: SimFileSystem,
  options: { config?: Record<string, string | number>; startMs?: number; seed?: number; logger?: Logger } = {},
): SimNode {
  const clock = new ManualClock(options.startMs ?? 1_700_000_000_000);
  const config = BrokerConfig.fromObject({
    ...SINGLE_NODE_DEFAULTS,
    'log.dirs': SIM_LOG_DIR,
    listeners: 'PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093',
    ...options.config,
  });
  const env = { fs, clock, timers: clock, random: new SeededRandom(options.seed ?? 1), net: unreachableNetwork };
  return { broker: new SpoolNode(config, env, options.logger ?? silentLogger), clock };
}

/** Lets every queued promise and 0 ms timer run (the simulated disk never blocks, so this drains the node). */
export async function settle(clock: ManualClock, turns = 5): Promise<void> {
  for (let turn = 0; turn < turns; turn++) {
    clock.advance(0);
    await nextTurn();
  }
}
/** How far the clock moves per turn while a node starts. */
const START_CLOCK_STEP_MS = 500;

/**
 * Starts the node, moving its clock while it waits: a node restarted after
 * a crash is refused (DUPLICATE_BROKER_REGISTRATION) until its previous
 * incarnation's session expires (broker.session.timeout.ms), as Kafka's is,
 * and retries on a timer.
 */
export async function startNode(node: SimNode): Promise<void> {
  let outcome: { error: unknown } | null = null;
  node.broker.start().then(
    () => (outcome = { error: null }),
    (error: unknown) => (outcome = { error }),
  );
  while (outcome === null) {
    node.clock.advance(START_CLOCK_STEP_MS);
    await nextTurn();
  }
  if ((outcome as { error: unknown }).error !== null) throw (outcome as { error: unknown }).error;
}
