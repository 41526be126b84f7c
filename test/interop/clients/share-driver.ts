/**
 * The share-consumer drivers as the share-group interop tests run them,
 * against Spool or Apache Kafka 4.4: a broker of either kind with short
 * acquisition locks, a running driver whose output lines can be awaited, and
 * the deliveries it printed. The Java driver
 * (test/interop/java-client/src/ShareDriver.java) defines the modes and the
 * line protocol and is the one that produces and sets the group's
 * share.auto.offset.reset; the franz-go (test/interop/go/share/main.go) and
 * confluent-kafka-python (test/interop/python/share_driver.py) drivers speak
 * its "consume" and "hold" modes.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { javaDriverMissing } from './java-client.js';
import { PYPI_PYTHON, pythonHas } from './python.js';
import { missingToolSkip } from './scenario.js';
import { startSpool } from './spool-process.js';
import { kafkaSkipReason, startKafka } from '../kafka/kafka.js';
import { Admin } from '../../../src/client/admin.js';

const DIR = fileURLToPath(new URL('../../../../test/interop/java-client/', import.meta.url));
const INTEROP_DIR = fileURLToPath(new URL('../../../../test/interop/', import.meta.url));
export const LOCK_CONFIG = ['group.share.min.record.lock.duration.ms=1000', 'group.share.record.lock.duration.ms=3000'];
export const WAIT_MS = 90_000;

export type Target = 'spool' | 'kafka';

export interface Broker {
  bootstrap: string;
  output(): string;
  stop(): Promise<unknown>;
}

export async function startTarget(target: Target): Promise<Broker> {
  if (target === 'kafka') {
    const kafka = await startKafka({ extraConfig: LOCK_CONFIG });
    return { bootstrap: kafka.bootstrap, output: () => '', stop: () => kafka.stop() };
  }
  const spool = await startSpool({ overrides: LOCK_CONFIG });
  return { bootstrap: spool.bootstrap, output: () => spool.output(), stop: () => spool.stop() };
}

export function skipReason(target: Target): string | undefined {
  return clientSkipReason(JAVA_SHARE, target);
}

/** A share-consumer driver program: the command line its mode and arguments follow, and why it cannot run here. */
export interface ShareClient {
  name: string;
  command: readonly string[];
  missing(): string | undefined;
}

export const JAVA_SHARE: ShareClient = {
  name: 'java',
  command: ['java', '-Xmx256m', '-XX:TieredStopAtLevel=1', '-cp', `${DIR}lib/*:${DIR}classes`, 'ShareDriver'],
  missing: javaDriverMissing,
};

const FRANZ_SHARE_BIN = `${INTEROP_DIR}go/bin/franz-share`;
export const FRANZ_SHARE: ShareClient = {
  name: 'franz-go',
  command: [FRANZ_SHARE_BIN],
  missing: () => (existsSync(FRANZ_SHARE_BIN) ? undefined : `franz-go share driver not built: run ${INTEROP_DIR}go/ci-setup.sh`),
};

export const CONFLUENT_SHARE: ShareClient = {
  name: 'confluent-kafka-python',
  command: [PYPI_PYTHON, `${INTEROP_DIR}python/share_driver.py`],
  missing: () => (pythonHas(['confluent_kafka'], PYPI_PYTHON) ? undefined : `${PYPI_PYTHON} cannot import confluent_kafka: run ${INTEROP_DIR}groups/ci-setup.sh`),
};

/** Why a test of `client` against `target` cannot run here (the Java driver produces for every client). */
export function clientSkipReason(client: ShareClient, target: Target): string | undefined {
  const missing = client.missing() ?? javaDriverMissing() ?? (target === 'kafka' ? kafkaSkipReason() : undefined);
  return missingToolSkip(missing === undefined, missing ?? '');
}

/** Every driver's lines in the order they arrived here, across drivers. */
export const timeline: string[] = [];

/** A running share-consumer driver (the Java one unless `client` says otherwise): its output lines, a way to wait for one, and to stop it. */
export class Driver {
  readonly lines: string[] = [];
  private readonly child: ChildProcessWithoutNullStreams;
  private errors = '';
  private readonly waiters: (() => void)[] = [];
  readonly exited: Promise<number | null>;

  constructor(args: readonly string[], options: { client?: ShareClient } = {}) {
    const [file, ...fixed] = (options.client ?? JAVA_SHARE).command;
    this.child = spawn(file!, [...fixed, ...args]);
    this.child.stderr.on('data', (data: Buffer) => { this.errors += data.toString(); });
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      this.lines.push(line);
      timeline.push(line);
      for (const waiter of this.waiters.splice(0)) waiter();
    });
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => {
      for (const waiter of this.waiters.splice(0)) waiter();
      resolve(code);
    }));
  }

  /** Resolves once `done()` holds over everything printed so far (checked at each new line). */
  async until(what: string, done: () => boolean): Promise<void> {
    const deadline = Date.now() + WAIT_MS;
    while (!done()) {
      if (this.child.exitCode !== null) throw new Error(`driver exited (${this.child.exitCode}) before ${what}: ${this.errors}`);
      if (Date.now() > deadline) throw new Error(`no ${what} within ${WAIT_MS} ms; printed:\n${this.lines.join('\n')}\n${this.errors}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 1000).unref();
      });
    }
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    this.child.stdin.end('stop\n');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 30_000);
    await this.exited;
    clearTimeout(timer);
  }

  kill(): Promise<number | null> {
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
    return this.exited;
  }

  get stderr(): string {
    return this.errors;
  }
}

export async function runToEnd(args: readonly string[]): Promise<string[]> {
  const driver = new Driver(args);
  const code = await driver.exited;
  assert.equal(code, 0, `ShareDriver ${args[0]} failed: ${driver.stderr}`);
  return driver.lines;
}

export interface Delivery { consumer: string; offset: number; value: string; deliveryCount: number }

/** Every "rec"/"held" line of the drivers, parsed. */
export function deliveries(drivers: readonly Driver[], kind: 'rec' | 'held' = 'rec'): Delivery[] {
  return drivers.flatMap((driver) =>
    driver.lines.filter((line) => line.startsWith(`${kind} `)).map((line) => {
      const [, consumer, , offset, value, count] = line.split(' ');
      return { consumer: consumer!, offset: Number(offset), value: value!, deliveryCount: Number(count) };
    }),
  );
}

export async function prepareTopic(broker: Broker, topic: string, group: string): Promise<void> {
  const admin = new Admin({ bootstrapServers: broker.bootstrap });
  try {
    await admin.createTopics([{ name: topic, numPartitions: 1, replicationFactor: 1 }]);
  } finally {
    await admin.close();
  }
  assert.deepEqual(await runToEnd(['earliest', broker.bootstrap, group]), ['ok']);
}


const ASSIGNMENT_POLL_MS = 200;

/**
 * Resolves once the group's coordinator reports `count` members, each assigned `topic` (ShareGroupDescribe). A
 * member's assignment travels in the response to its own heartbeat, so producing after this keeps a member that
 * joined first from taking every record before the others are assigned (Kafka's share heartbeat interval is 5 s).
 */
export async function untilAssigned(broker: Broker, options: { group: string; topic: string; count: number }): Promise<void> {
  const admin = new Admin({ bootstrapServers: broker.bootstrap });
  const deadline = Date.now() + WAIT_MS;
  try {
    for (;;) {
      const [group] = await admin.describeShareGroups([options.group]).catch(() => []);
      const assigned = (group?.members ?? []).filter((member) => member.assignment.some((partition) => partition.topic === options.topic));
      if (assigned.length >= options.count) return;
      if (Date.now() > deadline) throw new Error(`${assigned.length} of ${options.count} members of ${options.group} assigned ${options.topic} within ${WAIT_MS} ms: ${JSON.stringify(group?.members)}`);
      // Nothing announces a remote assignment: ask again.
      await new Promise((resolve) => setTimeout(resolve, ASSIGNMENT_POLL_MS));
    }
  } finally {
    await admin.close();
  }
}
