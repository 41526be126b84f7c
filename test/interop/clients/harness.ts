/**
 * Runs the client scenario (scenario.ts) for one client against a fresh
 * Spool child process: phase "run", its checks, the on-disk batch check,
 * phase "delete" and its check, then a clean SIGTERM stop (exit code 0).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  checkDelete, checkLog, checkRun, makeSpec, readLogBatches,
  type Capabilities, type DriverDelete, type DriverRun, type Spec,
} from './scenario.js';
import { startSpool } from './spool-process.js';

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

/** Runs the whole scenario; resolves with the client's self-reported name and version. */
export async function runClientScenario(scenario: ClientScenario): Promise<string> {
  const spool = await startSpool({ overrides: scenario.overrides ?? [] });
  const work = mkdtempSync(join(tmpdir(), `spool-${scenario.client}-`));
  try {
    const spec = makeSpec(scenario.client, spool.bootstrap, scenario.capabilities);
    const report = await scenario.run(spec, join(work, 'spec.json'));
    checkRun(spec, report);
    checkLog(spec, await readLogBatches(spool.dir, spec.topic, spec.partitions));
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
    assert.equal(await spool.stop(), 0, 'spool exits 0 on SIGTERM');
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
