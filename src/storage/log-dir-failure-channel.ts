/**
 * LogDirFailureChannel: where every I/O error in a log directory is reported
 * (Kafka's LogDirFailureChannel). Whatever hits the error (a segment write, a
 * fsync, a checkpoint rename, a producer snapshot, an index) reports the
 * directory here and throws KafkaStorageError; the directory then goes
 * offline as a whole and stays offline until the process restarts.
 *
 * Kafka hands the directory to a dedicated thread through a queue; here the
 * listeners run synchronously on the first report of each directory, so no
 * write to that directory can be acknowledged after the report returns:
 * the log manager marks every log of the directory offline, the replica
 * manager answers KAFKA_STORAGE_ERROR for its partitions, and the broker
 * stops once no log directory (or the metadata log directory) is left.
 */
import type { StorageLogger } from './log-config.js';

export type OfflineLogDirListener = (logDir: string) => void;

export class LogDirFailureChannel {
  private readonly offlineDirs = new Map<string, Error>();
  private readonly listeners: OfflineLogDirListener[] = [];

  constructor(private readonly logger: StorageLogger) {}

  hasOfflineLogDir(logDir: string): boolean {
    return this.offlineDirs.has(logDir);
  }

  /** The I/O error that took `logDir` offline, or undefined while it is online. */
  offlineCause(logDir: string): Error | undefined {
    return this.offlineDirs.get(logDir);
  }

  get offlineLogDirs(): string[] {
    return [...this.offlineDirs.keys()];
  }

  /** Called in registration order, once per directory, when it first goes offline. */
  onOfflineLogDir(listener: OfflineLogDirListener): void {
    this.listeners.push(listener);
  }

  /** Takes `logDir` offline (the first report of it only); `message` says what failed. */
  maybeAddOfflineLogDir(logDir: string, message: string, error: Error): void {
    this.logger.error(`${message}: ${error.message}`);
    if (this.offlineDirs.has(logDir)) return;
    this.offlineDirs.set(logDir, error);
    for (const listener of this.listeners) listener(logDir);
  }
}
