/**
 * Group members as child processes, and waiting on what they print.
 *
 * Every member driver (python/group_consumer.py, java/GroupConsumer.java,
 * go/main.go, kafkajs-member.ts) prints one JSON object per line:
 *   {"event":"started","client":"<name> <version>"}
 *   {"event":"assignment","partitions":[0,3]}     the full set, whenever it changed
 *   {"event":"produced","count":3}               with `produce` in the config: those records acknowledged, before joining
 *   {"event":"record","partition":0,"offset":5}   one per record, after the assignment holding it ("value" too where the driver prints it)
 *   {"event":"committed","offsets":[[0,6]]}       a successful synchronous commit of the records just printed
 *   {"event":"commitFailed","message":"...","offsets":[[0,6]]}
 *   {"event":"closed"}                            after SIGTERM: consumer closed, group left
 * A Member keeps them in order; `until` re-checks a condition whenever any
 * member prints a line, with one overall deadline (no sleeps), and fails at
 * once when a member exits unexpectedly.
 *
 * Test code: child processes and timers are used directly.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';

/** What a member driver reads (one JSON argument). */
export interface MemberConfig {
  bootstrap: string;
  group: string;
  topic: string;
  clientId: string;
  /** group.protocol */
  protocol: 'classic' | 'consumer';
  /** Classic: partition.assignment.strategy name; consumer: group.remote.assignor. Null: the client's default. */
  assignor: string | null;
  /** Classic only. */
  sessionTimeoutMs: number;
  /** Classic only. */
  heartbeatIntervalMs: number;
  /** Only the Python driver: which library. */
  library?: 'confluent' | 'kafka-python';
  /** A secured listener to talk to (test/interop/security/client-matrix.test.ts); absent: PLAINTEXT. */
  security?: MemberSecurity;
  /** Values the member produces (acks=all) before it subscribes; it prints "produced" once all are acknowledged. */
  produce?: string[];
}

/** How a member authenticates: SCRAM-SHA-512 over TLS, or a client certificate (mTLS). */
export interface MemberSecurity {
  protocol: 'SASL_SSL' | 'SSL';
  /** The CA (PEM file) the broker's certificate is checked against. */
  caPath: string;
  /** SSL: the client's certificate and key (PEM files). */
  certPath?: string;
  keyPath?: string;
  /** SASL_SSL: the SCRAM-SHA-512 user. */
  username?: string;
  password?: string;
}

export interface Command {
  file: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
}

export interface Delivery {
  partition: number;
  offset: number;
  /** Index of the line in the member's output (orders deliveries against commits). */
  line: number;
  /** The member's assignment when it printed the record. */
  assignment: readonly number[];
  /** The record's value, where the driver prints it. */
  value?: string;
  /** When the test read the line, as a rank among every member's lines (orders deliveries of different members). */
  arrival: number;
}

type Line =
  | { event: 'started'; client: string }
  | { event: 'assignment'; partitions: number[] }
  | { event: 'record'; partition: number; offset: number; value?: string }
  | { event: 'produced'; count: number }
  | { event: 'committed' | 'commitFailed'; offsets: [number, number][]; message?: string }
  | { event: 'closed' | 'clientError'; message?: string };

/** Fired (with no argument) whenever any member prints a line or exits. */
const changes = new EventEmitter();
/** Lines read from all members so far: Delivery.arrival. */
let arrivals = 0;
changes.setMaxListeners(100);

export class Member {
  readonly deliveries: Delivery[] = [];
  /** Successful commits: [line index, partition, next offset, arrival (as Delivery.arrival)]. */
  readonly commits: [number, number, number, number][] = [];
  readonly failedCommits: string[] = [];
  readonly errors: string[] = [];
  client: string | undefined;
  /** Records the member produced (its "produced" line), if it was asked to. */
  produced: number | undefined;
  assignment: number[] | null = null;
  /** Every assignment line: [line index, partitions]. */
  readonly assignments: [number, number[]][] = [];
  closed = false;
  /** Set by kill9(): its uncommitted deliveries may be delivered again to others. */
  killed = false;
  /** Set by stop(). */
  stopping = false;
  exit: { code: number | null; signal: string | null } | undefined;
  private lines = 0;
  private stderr = '';
  private readonly child: ChildProcess;
  private readonly exited: Promise<void>;

  constructor(readonly name: string, command: Command) {
    this.child = spawn(command.file, command.args, { stdio: ['ignore', 'pipe', 'pipe'], env: command.env ?? process.env });
    let pending = '';
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk;
      const complete = pending.split('\n');
      pending = complete.pop()!;
      for (const text of complete) if (text.trim() !== '') this.take(text);
      changes.emit('change');
    });
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-20_000);
    });
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve();
        changes.emit('change');
      });
    });
  }

  private take(text: string): void {
    let line: Line;
    try {
      line = JSON.parse(text) as Line;
    } catch {
      this.errors.push(`not JSON: ${text.slice(0, 300)}`);
      return;
    }
    const index = this.lines++;
    const arrival = ++arrivals;
    switch (line.event) {
      case 'started': this.client = line.client; break;
      case 'assignment': this.assignment = line.partitions; this.assignments.push([index, line.partitions]); break;
      case 'produced': this.produced = line.count; break;
      case 'record': this.deliveries.push({ partition: line.partition, offset: line.offset, line: index, arrival, assignment: this.assignment ?? [], ...(line.value === undefined ? {} : { value: line.value }) }); break;
      case 'committed': for (const [partition, next] of line.offsets) this.commits.push([index, partition, next, arrival]); break;
      case 'commitFailed': this.failedCommits.push(`${line.message} ${JSON.stringify(line.offsets)}`); break;
      case 'closed': this.closed = true; break;
      case 'clientError': this.errors.push(line.message ?? ''); break;
    }
  }

  /** True while the process runs and was not told to stop. */
  get alive(): boolean {
    return this.exit === undefined;
  }

  /** The highest committed next offset per partition. */
  committedOffsets(): Map<number, number> {
    const out = new Map<number, number>();
    for (const [, partition, next] of this.commits) out.set(partition, Math.max(out.get(partition) ?? 0, next));
    return out;
  }

  /** True when a commit printed after the delivery covers it. */
  committedAfter(delivery: Delivery): boolean {
    return this.commits.some(([line, partition, next]) => line > delivery.line && partition === delivery.partition && next > delivery.offset);
  }

  /** True when a commit printed after the delivery covers it and reached the test before `arrival`. */
  committedBefore(delivery: Delivery, arrival: number): boolean {
    return this.commits.some(([line, partition, next, at]) => line > delivery.line && partition === delivery.partition && next > delivery.offset && at < arrival);
  }

  /** Every delivery is covered by a later commit. */
  allCommitted(): boolean {
    return this.deliveries.every((delivery) => this.committedAfter(delivery));
  }

  async kill9(): Promise<void> {
    this.killed = true;
    this.child.kill('SIGKILL');
    await this.exited;
  }

  /** SIGTERM (the driver closes its consumer and leaves the group); resolves with the exit code. */
  async stop(): Promise<number | null> {
    this.stopping = true;
    if (this.alive) this.child.kill('SIGTERM');
    await this.exited;
    return this.exit!.code;
  }

  /** The deliveries as runs of consecutive offsets per partition, "p: first-last@line", for failure messages. */
  private deliveredRanges(): string {
    const runs: { partition: number; first: number; last: number; line: number }[] = [];
    const open = new Map<number, { partition: number; first: number; last: number; line: number }>();
    for (const { partition, offset, line } of this.deliveries) {
      const run = open.get(partition);
      if (run !== undefined && offset === run.last + 1) {
        run.last = offset;
        continue;
      }
      const next = { partition, first: offset, last: offset, line };
      runs.push(next);
      open.set(partition, next);
    }
    return runs.map((r) => `${r.partition}: ${r.first}-${r.last}@${r.line}`).join(', ');
  }

  /** Last lines of stderr and a summary, for failure messages. */
  describe(): string {
    const exit = this.exit === undefined ? 'running' : `exit ${this.exit.code ?? this.exit.signal}`;
    const commits = JSON.stringify([...this.committedOffsets()]);
    return `${this.name} (${exit}${this.killed ? ', killed' : ''}): assignment ${JSON.stringify(this.assignment)}, ` +
      `${this.deliveries.length} records, committed ${commits}, failed commits ${this.failedCommits.length}` +
      `${this.errors.length > 0 ? `, errors ${JSON.stringify(this.errors.slice(-3))}` : ''}` +
      `\n    assignments (line: partitions) ${this.assignments.map(([line, partitions]) => `${line}: ${JSON.stringify(partitions)}`).join(', ')}` +
      `\n    delivered (partition: offset ranges from line) ${this.deliveredRanges()}` +
      `${this.stderr.trim() === '' ? '' : `\n  stderr: ${this.stderr.trim().slice(-1500)}`}`;
  }
}

/**
 * Resolves once `condition()` holds, re-checked whenever a member prints a
 * line; rejects after `timeoutMs`, or as soon as a member in `watch` exits
 * without being told to (killed or stopped). Callers add the members' state
 * (Member.describe) to the error.
 */
export function until(what: string, condition: () => boolean, watch: readonly Member[], timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const finish = (error?: Error): void => {
      clearTimeout(timer);
      changes.off('change', check);
      if (error === undefined) resolve();
      else reject(error);
    };
    const check = (): void => {
      const dead = watch.find((member) => !member.alive && !member.killed && !member.stopping);
      if (dead !== undefined) finish(new Error(`waiting for ${what}: ${dead.name} exited`));
      else if (condition()) finish();
    };
    const timer = setTimeout(() => finish(new Error(`waiting for ${what}: not within ${timeoutMs} ms`)), timeoutMs);
    changes.on('change', check);
    check();
  });
}
