/**
 * Metadata operations per second on three combined KRaft nodes: topic
 * creations and deletions, Spool next to Apache Kafka 4.4 (the quorum of
 * bench/lib/quorum.ts: static voters, Kafka's default quorum timeouts).
 *
 *   npx tsc -p . && node dist/bench/metadata-ops.js [--topics 1000] [--rf 1] [--brokers spool,kafka]
 *        [--modes batch100,one,one-c16] [--to brokers|controller] [--profile DIR]
 *
 * Modes: `batchN` sends CreateTopics (then DeleteTopics) of N topics per
 * request, one request at a time; `one` one topic per request, one at a
 * time; `one-cN` one topic per request from N connections at once. Every
 * topic has one partition and `--rf` replicas. `--to brokers` (default)
 * sends to the brokers (connection i to broker i mod 3), which forward to the active
 * controller as a client's requests are; `--to controller` sends to the
 * active controller's CONTROLLER listener directly. A request counts when
 * its answer comes back (the controller answers once the records are
 * committed); any topic error is counted and printed, and so is a change
 * of the quorum's epoch during the mode (an election under load). Both clusters stay up
 * for the whole run and each mode runs on one, then the other (alternating
 * which goes first), so a change in the machine's load hits both.
 * `--profile DIR` runs Spool's nodes under `node --cpu-prof` and prints the
 * heaviest functions of the active controller's process.
 *
 * Benchmark code, not product code: it uses the clock and child processes
 * directly.
 */
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { BrokerConnection } from '../src/client/connection.js';
import { realEnv } from '../src/io/env.js';
import { ErrorCode } from '../src/protocol/errors.js';
import { ZERO_UUID } from '../src/protocol/reader.js';
import { CreateTopics } from '../src/protocol/schemas/19-create-topics.js';
import { DeleteTopics } from '../src/protocol/schemas/20-delete-topics.js';
import { summarizeProfile } from './lib/profile.js';
import { poll, Quorum, type QuorumKind } from './lib/quorum.js';

const ARGS = parseArgs({
  options: {
    topics: { type: 'string', default: '1000' },
    rf: { type: 'string', default: '1' },
    brokers: { type: 'string', default: 'spool,kafka' },
    modes: { type: 'string', default: 'batch100,one,one-c16' },
    to: { type: 'string', default: 'brokers' },
    profile: { type: 'string' },
  },
}).values;
const REQUEST_TIMEOUT_MS = 120_000;

interface Mode {
  name: string;
  batch: number;
  concurrency: number;
}

function parseMode(name: string): Mode {
  const batch = /^batch(\d+)$/.exec(name);
  if (batch !== null) return { name, batch: Number(batch[1]), concurrency: 1 };
  const one = /^one(?:-c(\d+))?$/.exec(name);
  if (one !== null) return { name, batch: 1, concurrency: Number(one[1] ?? 1) };
  throw new Error(`unknown mode ${name}`);
}

/** The ports requests go to: the brokers in turn, or the active controller. */
async function targets(quorum: Quorum): Promise<number[]> {
  if (ARGS.to === 'brokers') return quorum.nodes.map((n) => n.port);
  const leader = await poll(() => quorum.leader());
  return [quorum.nodes.find((n) => n.id === leader.leaderId)!.controllerPort];
}

/** Sends the batches from `mode.concurrency` connections; resolves with seconds taken and topic errors. */
async function drive(ports: number[], mode: Mode, batches: string[][], send: (c: BrokerConnection, names: string[]) => Promise<number[]>): Promise<{ seconds: number; errors: Map<number, number> }> {
  const connections = await Promise.all(
    Array.from({ length: mode.concurrency }, (_, index) => BrokerConnection.connect({ host: '127.0.0.1', port: ports[index % ports.length]!, env: realEnv, requestTimeoutMs: REQUEST_TIMEOUT_MS })),
  );
  const errors = new Map<number, number>();
  let next = 0;
  const startedAt = performance.now();
  try {
    await Promise.all(connections.map(async (connection) => {
      while (next < batches.length) {
        const codes = await send(connection, batches[next++]!);
        for (const code of codes) if (code !== ErrorCode.NONE) errors.set(code, (errors.get(code) ?? 0) + 1);
      }
    }));
    return { seconds: (performance.now() - startedAt) / 1000, errors };
  } finally {
    for (const connection of connections) connection.destroy();
  }
}

async function measure(quorum: Quorum, mode: Mode, count: number, replicationFactor: number): Promise<string> {
  const names = Array.from({ length: count }, (_, index) => `ops-${mode.name}-${index}`);
  const batches: string[][] = [];
  for (let index = 0; index < names.length; index += mode.batch) batches.push(names.slice(index, index + mode.batch));
  const ports = await targets(quorum);
  const epochBefore = (await poll(() => quorum.leader())).epoch;
  const created = await drive(ports, mode, batches, async (connection, batch) => {
    const response = await connection.send(CreateTopics, {
      topics: batch.map((name) => ({ name, numPartitions: 1, replicationFactor, assignments: [], configs: [] })),
      timeoutMs: 60_000,
      validateOnly: false,
    });
    return response.topics.map((t) => t.errorCode);
  });
  const deleted = await drive(ports, mode, batches, async (connection, batch) => {
    const response = await connection.send(DeleteTopics, { topics: batch.map((name) => ({ name, topicId: ZERO_UUID })), topicNames: batch, timeoutMs: 60_000 });
    return response.responses.map((t) => t.errorCode);
  });
  const epochAfter = (await poll(() => quorum.leader())).epoch;
  const errors = (map: Map<number, number>) => (map.size === 0 ? '' : ` (errors: ${[...map].map(([code, n]) => `${code}×${n}`).join(', ')})`);
  return `${quorum.options.kind} ${mode.name} (batch ${mode.batch}, ${mode.concurrency} at once, rf ${replicationFactor}): ` +
    `created ${count} in ${created.seconds.toFixed(2)} s = ${(count / created.seconds).toFixed(0)}/s${errors(created.errors)}; ` +
    `deleted in ${deleted.seconds.toFixed(2)} s = ${(count / deleted.seconds).toFixed(0)}/s${errors(deleted.errors)} (load ${loadavg()[0]!.toFixed(2)}${epochAfter === epochBefore ? '' : `; the quorum elected again: epoch ${epochBefore} to ${epochAfter}`})`;
}

function printProfiles(dir: string, leaderPid: number | null): void {
  if (!existsSync(dir)) return;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
    // Node names a profile CPU.<date>.<time>.<pid>.<tid>.<seq>.cpuprofile.
    const pid = Number(file.split('.')[3]);
    const summary = summarizeProfile(join(dir, file), 12);
    console.log(`\nprofile ${file}${pid === leaderPid ? ' (the active controller)' : ''}: busy ${(summary.busyMs / 1000).toFixed(1)} s of ${(summary.totalMs / 1000).toFixed(1)} s`);
    for (const f of summary.topFunctions) console.log(`  ${f.percent.toFixed(1).padStart(5)}%  ${f.name}  ${f.file}${f.calledFrom === undefined ? '' : `  <- ${f.calledFrom}`}`);
    console.log(`  by file: ${summary.topFiles.map((f) => `${f.file} ${f.percent.toFixed(1)}%`).join(', ')}`);
  }
}

async function main(): Promise<void> {
  const kinds = ARGS.brokers.split(',') as QuorumKind[];
  const modes = ARGS.modes.split(',').map(parseMode);
  const count = Number(ARGS.topics);
  const replicationFactor = Number(ARGS.rf);
  if (ARGS.profile !== undefined) mkdirSync(ARGS.profile, { recursive: true });
  const quorums = kinds.map((kind) => new Quorum({
    kind,
    shape: 'combined',
    electionTimeoutMs: 1000,
    fetchTimeoutMs: 2000,
    ...(kind === 'spool' && ARGS.profile !== undefined ? { cpuProfileDir: ARGS.profile } : {}),
  }));
  console.log(`3 combined nodes each for ${kinds.join(', ')}; ${count} topics per mode, to ${ARGS.to}; load before ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  let spoolLeaderPid: number | null = null;
  try {
    for (const quorum of quorums) {
      await quorum.start();
      await quorum.brokersReady();
    }
    for (const [index, mode] of modes.entries()) {
      const order = index % 2 === 0 ? quorums : [...quorums].reverse();
      for (const quorum of order) console.log(await measure(quorum, mode, count, replicationFactor));
    }
    console.log(`load after ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    const spool = quorums.find((q) => q.options.kind === 'spool');
    const leader = spool === undefined ? null : await spool.leader();
    if (spool !== undefined && leader !== null) spoolLeaderPid = spool.pid(spool.nodes.find((n) => n.id === leader.leaderId)!);
  } finally {
    for (const quorum of quorums) await quorum.stop();
  }
  if (ARGS.profile !== undefined) printProfiles(ARGS.profile, spoolLeaderPid);
}

await main();
