/**
 * Runs the client scenario (scenario.ts) for one client against a fresh
 * Spool child process, or a fresh cluster of three (spool-cluster.ts): phase "run", its checks, the on-disk batch check,
 * phase "delete" and its check, then a clean SIGTERM stop (exit code 0).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  checkDelete, checkLog, checkRun, makeSpec, partitionDir, readLogBatches,
  type Capabilities, type DriverDelete, type DriverRun, type Spec,
} from './scenario.js';
import { startSpool } from './spool-process.js';
import { CLUSTER_NODES, startSpoolCluster } from './spool-cluster.js';

export interface ClientScenario {
  /** Short name, used in the topic name. */
  client: string;
  capabilities: Capabilities;
  /** Runs phase "run" (the spec file is written at specPath first by runDriver, or used in-process). */
  run(spec: Spec, specPath: string): Promise<DriverRun>;
  /** Runs phase "delete"; topicsAfter null when the client cannot delete topics. */
  delete(spec: Spec, specPath: string): Promise<Omit<DriverDelete, 'topicsAfter'> & { topicsAfter: string[] | null }>;
  /** Extra broker properties, e.g. num.partitions=3 for a client that cannot create topics. */
  overrides?: readonly string[];
}

/** What the scenario runs against: one node, or three combined nodes with the topic's partitions spread over them. */
interface Target {
  bootstrap: string;
  dirs: readonly string[];
  output(): string;
  stop(): Promise<(number | null)[]>;
}

async function startTarget(scenario: ClientScenario, shape: 'node' | 'cluster'): Promise<Target> {
  const overrides = scenario.overrides ?? [];
  if (shape === 'cluster') return startSpoolCluster({ overrides });
  const spool = await startSpool({ overrides });
  return { bootstrap: spool.bootstrap, dirs: [spool.dir], output: () => spool.output(), stop: async () => [await spool.stop()] };
}

/**
 * Runs the whole scenario; resolves with the client's self-reported name and
 * version. `cluster`: against three combined nodes (spool-cluster.ts), the
 * client bootstrapped from one of them; the topic's three RF=1 partitions
 * must then live on three different nodes, so the client produced to and
 * fetched from each broker.
 */
export async function runClientScenario(scenario: ClientScenario, options: { cluster?: boolean } = {}): Promise<string> {
  const spool = await startTarget(scenario, options.cluster === true ? 'cluster' : 'node');
  const work = mkdtempSync(join(tmpdir(), `spool-${scenario.client}-`));
  try {
    const spec = makeSpec(scenario.client, spool.bootstrap, scenario.capabilities);
    const report = await scenario.run(spec, join(work, 'spec.json'));
    checkRun(spec, report);
    checkLog(spec, await readLogBatches(spool.dirs, spec.topic, spec.partitions));
    if (options.cluster === true) {
      const nodesUsed = new Set(Array.from({ length: spec.partitions }, (_, p) => spool.dirs.indexOf(dirname(partitionDir(spool.dirs, spec.topic, p)))));
      assert.equal(nodesUsed.size, CLUSTER_NODES, `the ${spec.partitions} partitions are spread over the ${CLUSTER_NODES} brokers`);
    }
    const deleted = await scenario.delete({ ...spec, phase: 'delete' }, join(work, 'spec-delete.json'));
    if (deleted.topicsAfter === null) {
      assert.ok(deleted.topicsBefore.includes(spec.topic));
      assert.equal(deleted.describedPartitions, spec.partitions);
    } else {
      checkDelete(spec, { ...deleted, topicsAfter: deleted.topicsAfter });
    }
    return report.client;
  } catch (error) {
    (error as Error).message += `\n--- spool output (tail) ---\n${spool.output().slice(-4000)}`;
    throw error;
  } finally {
    rmSync(work, { recursive: true, force: true });
    assert.deepEqual(await spool.stop(), spool.dirs.map(() => 0), 'every spool node exits 0 on SIGTERM');
  }
}

/** True when `command` is on PATH. */
export function hasCommand(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
