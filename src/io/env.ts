/**
 * The environment every component receives: the only doors to time,
 * randomness, files and sockets. Production uses `realEnv`; tests and the
 * simulator build one from simulated parts.
 */
import { realClock, realTimers, type Clock, type Timers } from './clock.js';
import { realFileSystem, type FileSystem } from './fs.js';
import { realNetwork, type Network } from './net.js';
import { realRandom, type Random } from './random.js';
import { realHttp, type HttpNetwork } from './http.js';

export interface Env {
  clock: Clock;
  timers: Timers;
  random: Random;
  fs: FileSystem;
  net: Network;
  /** The operator listeners' HTTP (metrics, console); absent in the simulator, which sets neither. */
  http?: HttpNetwork;
}

export const realEnv: Env = {
  clock: realClock,
  timers: realTimers,
  random: realRandom,
  fs: realFileSystem,
  net: realNetwork,
  http: realHttp,
};

export type { Clock, Timers, TimerHandle } from './clock.js';
export type { FileSystem, FileHandle, FileStat, OpenMode } from './fs.js';
export type { Network, Connection, Listener, ListenOptions } from './net.js';
export type { Random } from './random.js';
export { ManualClock } from './clock.js';
export { SeededRandom } from './random.js';
