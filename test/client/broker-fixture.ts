/**
 * A broker for end-to-end client and CLI tests: startBroker() on free ports
 * with its data in a fresh temporary directory, removed on stop.
 * SPOOL_E2E_BOOTSTRAP=host:port points the same tests at an already
 * running broker instead (for example a real Apache Kafka, to check that
 * the tests themselves hold against Kafka).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestBroker {
  bootstrapServers: string;
  stop(): Promise<void>;
}

export async function startTestBroker(config: Record<string, string | number | boolean> = {}): Promise<TestBroker> {
  const external = process.env.SPOOL_E2E_BOOTSTRAP;
  if (external !== undefined && external !== '') return { bootstrapServers: external, stop: async () => undefined };
  const dir = mkdtempSync(join(tmpdir(), 'spool-e2e-'));
  const { startBroker } = await import('../../src/node/embedded.js');
  const running = await startBroker({ config: { 'log.dirs': dir, 'num.partitions': 1, ...config } });
  return {
    bootstrapServers: running.bootstrapServers,
    stop: async () => {
      await running.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let sequence = 0;

/** A topic name no other test in this process uses (the broker may be shared with earlier runs). */
export function uniqueTopic(prefix: string): string {
  sequence++;
  return `${prefix}-${process.pid}-${sequence}-${Math.floor(Math.random() * 1e9)}`;
}
