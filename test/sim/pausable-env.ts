/**
 * An Env whose node can be paused, as a long GC stall or SIGSTOP pauses a
 * process: while paused, none of its timers fire and nothing that arrives
 * on its connections (data, drain, close, new connections) reaches it; all
 * of it is held, in order, and runs when it resumes. Work already under way
 * (a promise chain settling, a file call completing) is not held: a stall
 * here begins between events.
 */
import type { Env } from '../../src/io/env.js';
import type { Connection } from '../../src/io/net.js';

export class PauseControl {
  private pausedValue = false;
  private readonly held: (() => void)[] = [];

  get paused(): boolean {
    return this.pausedValue;
  }

  pause(): void {
    this.pausedValue = true;
  }

  /** Runs what was held, in the order it came. */
  resume(): void {
    this.pausedValue = false;
    for (const callback of this.held.splice(0)) callback();
  }

  /** Runs `callback` now, or on resume while paused. */
  run(callback: () => void): void {
    if (this.pausedValue) this.held.push(callback);
    else callback();
  }
}

export function pausableEnv(base: Env, control: PauseControl): Env {
  const wrap = (connection: Connection): Connection => ({
    get remoteAddress() {
      return connection.remoteAddress;
    },
    get remotePort() {
      return connection.remotePort;
    },
    get tlsPeer() {
      return connection.tlsPeer;
    },
    get pendingWriteBytes() {
      return connection.pendingWriteBytes;
    },
    write: (chunks) => connection.write(chunks),
    onData: (listener) => connection.onData((data) => control.run(() => listener(data))),
    onDrain: (listener) => connection.onDrain(() => control.run(listener)),
    onClose: (listener) => connection.onClose((error) => control.run(() => listener(error))),
    pause: () => connection.pause(),
    resume: () => connection.resume(),
    end: () => connection.end(),
    destroy: () => connection.destroy(),
  });
  return {
    ...base,
    timers: {
      schedule: (delayMs, callback) => base.timers.schedule(delayMs, () => control.run(callback)),
      defer: (callback) => base.timers.defer(() => control.run(callback)),
    },
    net: {
      listen: (options, onConnection) => base.net.listen(options, (connection) => control.run(() => onConnection(wrap(connection)))),
      connect: async (options) => wrap(await base.net.connect(options)),
    },
  };
}
