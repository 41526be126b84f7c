/**
 * An Env that can be killed, for nodes embedded in one process: kill() is
 * what kill -9 is to a process. The operating system's part of a kill is
 * done at once: every listener closes (so the ports can be bound again),
 * every connection is reset, every open file is closed. From then on the
 * dead node's timers never fire, nothing new connects, and every
 * file-system call never completes, so its pending work stops where it is
 * and writes nothing more. What it wrote before stays written (the page
 * cache survives a process kill); a write already handed to the kernel
 * completes or not, as it may in a real kill.
 *
 * Everything a dead node waits on stays pending forever; its memory is
 * reclaimed only with the objects that hold those promises.
 */
import type { Env, Network, Timers, TimerHandle } from '../io/env.js';
import type { FileHandle, FileSystem } from '../io/fs.js';
import type { Connection, Listener } from '../io/net.js';
import type { HttpNetwork } from '../io/http.js';

export interface KillableEnv {
  readonly env: Env;
  readonly killed: boolean;
  /** Resolves when kill() is called. */
  readonly whenKilled: Promise<void>;
  /** Resolves once the listeners and files are closed. */
  kill(): Promise<void>;
}

/** What a dead process's calls return: nothing, ever. */
const never = <T>(): Promise<T> => new Promise<T>(() => undefined);

export function killableEnv(base: Env): KillableEnv {
  const state = new KillState();
  return {
    env: {
      ...base,
      timers: killableTimers(base.timers, state),
      net: killableNetwork(base.net, state),
      fs: killableFileSystem(base.fs, state),
      ...(base.http === undefined ? {} : { http: killableHttp(base.http, state) }),
    },
    get killed() {
      return state.killed;
    },
    whenKilled: state.whenKilled,
    kill: () => state.kill(),
  };
}

/** What the operating system holds for a process and releases when it dies. */
class KillState {
  killed = false;
  readonly listeners = new Set<Listener>();
  readonly connections = new Set<Connection>();
  readonly files = new Set<FileHandle>();
  private resolveKilled!: () => void;
  readonly whenKilled = new Promise<void>((resolve) => (this.resolveKilled = resolve));

  /** The result of a base call, or never once the process is dead (before or after the call). */
  async call<T>(operation: () => Promise<T>): Promise<T> {
    if (this.killed) return never();
    const result = await operation();
    if (this.killed) return never();
    return result;
  }

  /** A listener the kill closes; closed before that, it is forgotten. */
  hold(listener: Listener): Listener {
    this.listeners.add(listener);
    const tls = listener.setTlsContext === undefined ? {} : { setTlsContext: listener.setTlsContext.bind(listener) };
    return { host: listener.host, port: listener.port, close: () => (this.listeners.delete(listener) ? listener.close() : Promise.resolve()), ...tls };
  }

  async kill(): Promise<void> {
    if (this.killed) return;
    this.killed = true;
    this.resolveKilled();
    for (const connection of this.connections) connection.destroy();
    this.connections.clear();
    const closing = [...this.listeners].map((listener) => listener.close());
    closing.push(...[...this.files].map((file) => file.close().catch(() => undefined)));
    this.listeners.clear();
    this.files.clear();
    await Promise.all(closing);
  }
}

function killableTimers(base: Timers, state: KillState): Timers {
  return {
    schedule(delayMs: number, callback: () => void): TimerHandle {
      return base.schedule(delayMs, () => {
        if (!state.killed) callback();
      });
    },
    defer(callback: () => void): void {
      base.defer(() => {
        if (!state.killed) callback();
      });
    },
  };
}

function killableNetwork(base: Network, state: KillState): Network {
  const track = (connection: Connection): Connection => {
    state.connections.add(connection);
    connection.onClose(() => state.connections.delete(connection));
    return connection;
  };
  return {
    async listen(options, onConnection) {
      const listener = await state.call(() =>
        base.listen(options, (connection) => {
          if (state.killed) connection.destroy();
          else onConnection(track(connection));
        }),
      );
      return state.hold(listener);
    },
    async connect(options) {
      if (state.killed) return never();
      const connection = await base.connect(options);
      if (state.killed) {
        connection.destroy();
        return never();
      }
      return track(connection);
    },
  };
}

/** The operator listeners close with the process, as its Kafka listeners do. */
function killableHttp(base: HttpNetwork, state: KillState): HttpNetwork {
  return {
    async listen(address, handler, maxBodyBytes) {
      return state.hold(await state.call(() => base.listen(address, handler, maxBodyBytes)));
    },
  };
}

function killableFileSystem(base: FileSystem, state: KillState): FileSystem {
  return {
    async open(path, mode) {
      if (state.killed) return never();
      const file = await base.open(path, mode);
      if (state.killed) {
        await file.close().catch(() => undefined);
        return never();
      }
      state.files.add(file);
      return killableFile(file, state);
    },
    readFile: (path) => state.call(() => base.readFile(path)),
    writeFileAtomic: (path, data) => state.call(() => base.writeFileAtomic(path, data)),
    rename: (from, to) => state.call(() => base.rename(from, to)),
    unlink: (path) => state.call(() => base.unlink(path)),
    removeTree: (path) => state.call(() => base.removeTree(path)),
    mkdir: (path) => state.call(() => base.mkdir(path)),
    readdir: (path) => state.call(() => base.readdir(path)),
    stat: (path) => state.call(() => base.stat(path)),
    syncDir: (path) => state.call(() => base.syncDir(path)),
  };
}

function killableFile(file: FileHandle, state: KillState): FileHandle {
  return {
    path: file.path,
    read: (buffer, position) => state.call(() => file.read(buffer, position)),
    write: (chunks, position) => state.call(() => file.write(chunks, position)),
    truncate: (size) => state.call(() => file.truncate(size)),
    sync: () => state.call(() => file.sync()),
    size: () => state.call(() => file.size()),
    async close() {
      if (!state.files.delete(file)) return state.killed ? never() : undefined;
      await file.close();
    },
  };
}
