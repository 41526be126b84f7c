/**
 * What the three index files of a segment share: fixed-size big-endian
 * entries kept in an in-memory Buffer (the role Kafka's mmap plays), written
 * to the file only on flush, roll and close.
 *
 * File format: entries back to back, nothing else; the file length is
 * entries x entry size (Kafka preallocates and trims on close; Spool never
 * preallocates, so a file always holds exactly its entries).
 *
 * Crash policy: the in-memory entries are the truth while running. The file
 * may lag (entries appended since the last flush are missing) or, after a
 * crash, hold anything; a loaded index is therefore sanity-checked by its
 * owner and rebuilt from the .log when the check fails. `flush` writes the
 * entries that changed since the last write, trims the file to the entries
 * and fsyncs it; the segment flushes its .log first, so a synced index never
 * points past synced log data.
 */
import type { FileHandle, FileSystem } from '../io/fs.js';
import { CorruptIndexError } from './errors.js';

/** Starting capacity of the in-memory entry buffer, in entries; it doubles up to maxEntries. */
const INITIAL_CAPACITY_ENTRIES = 64;

export abstract class IndexFile {
  protected buffer: Buffer;
  private entryCount = 0;
  /** Bytes at the start of the file known to equal the buffer. */
  private persistedBytes = 0;
  /** File length as last written or loaded; -1 when the file does not exist. */
  private fileBytes = -1;
  private handle: FileHandle | null = null;
  /** Whether a flush creates the file when there are no entries (Kafka creates .txnindex lazily). */
  protected createWhenEmpty = true;
  /** Bytes were written or trimmed since the last fsync. */
  private unsynced = false;
  readonly maxEntries: number;

  constructor(
    protected readonly fs: FileSystem,
    private filePath: string,
    readonly baseOffset: number,
    maxIndexBytes: number,
    readonly entryBytes: number,
  ) {
    this.maxEntries = Math.floor(maxIndexBytes / entryBytes);
    if (this.maxEntries < 1) throw new RangeError(`segment.index.bytes ${maxIndexBytes} holds no ${entryBytes}-byte entry`);
    this.buffer = Buffer.alloc(Math.min(this.maxEntries, INITIAL_CAPACITY_ENTRIES) * entryBytes);
  }

  get path(): string {
    return this.filePath;
  }

  get entries(): number {
    return this.entryCount;
  }

  get isFull(): boolean {
    return this.entryCount >= this.maxEntries;
  }

  get sizeBytes(): number {
    return this.entryCount * this.entryBytes;
  }

  /**
   * Reads the file into memory. Returns false when it does not exist. Throws
   * CorruptIndexError when its length is not a whole number of entries; the
   * owner then calls `reset` and rebuilds. (More entries than the cap is
   * allowed: segment.index.bytes may have shrunk; the index is just full.)
   */
  async load(): Promise<boolean> {
    const stat = await this.fs.stat(this.filePath);
    if (stat === null) return false;
    this.fileBytes = stat.size;
    if (stat.size % this.entryBytes !== 0) {
      throw new CorruptIndexError(`${this.filePath}: length ${stat.size} is not a multiple of ${this.entryBytes}`);
    }
    const content = await this.fs.readFile(this.filePath);
    this.ensureCapacity(content.length / this.entryBytes);
    content.copy(this.buffer, 0);
    this.entryCount = content.length / this.entryBytes;
    this.persistedBytes = content.length;
    return true;
  }

  /** Forgets every entry (the file is trimmed at the next write). */
  reset(): void {
    this.truncateToEntries(0);
  }

  /** Keeps the first `count` entries. */
  protected truncateToEntries(count: number): void {
    if (count >= this.entryCount) return;
    this.entryCount = count;
    this.persistedBytes = Math.min(this.persistedBytes, count * this.entryBytes);
  }

  /** Reserves the next entry slot and returns its byte position; the caller fills it. */
  protected nextEntryPosition(options: { ignoreCap?: boolean } = {}): number {
    if (this.isFull && options.ignoreCap !== true) throw new RangeError(`${this.filePath}: index is full (${this.maxEntries} entries)`);
    this.ensureCapacity(this.entryCount + 1);
    return this.entryCount++ * this.entryBytes;
  }

  /** Largest entry index whose key is <= `target`, or -1; keys must be increasing. */
  protected floorEntry(target: number, keyAt: (entry: number) => number): number {
    let low = 0;
    let high = this.entryCount - 1;
    let found = -1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      if (keyAt(middle) <= target) {
        found = middle;
        low = middle + 1;
      } else {
        high = middle - 1;
      }
    }
    return found;
  }

  /** Writes changed entries and trims the file to them, without fsync. */
  async writeOut(): Promise<void> {
    const validBytes = this.sizeBytes;
    if (this.persistedBytes === validBytes && this.fileBytes === validBytes) return;
    if (this.fileBytes < 0 && validBytes === 0 && !this.createWhenEmpty) return;
    const handle = await this.openHandle();
    if (this.fileBytes > validBytes) {
      await handle.truncate(validBytes);
      this.fileBytes = validBytes;
    }
    if (this.persistedBytes < validBytes) {
      await handle.write([this.buffer.subarray(this.persistedBytes, validBytes)], this.persistedBytes);
    }
    this.persistedBytes = validBytes;
    this.fileBytes = validBytes;
    this.unsynced = true;
  }

  /** Makes the file equal to the entries and durable. */
  async flush(): Promise<void> {
    await this.writeOut();
    if (!this.unsynced) return;
    await (await this.openHandle()).sync();
    this.unsynced = false;
  }

  /** Writes out and releases the file handle. */
  async close(): Promise<void> {
    await this.writeOut();
    await this.closeHandle();
  }

  async closeHandle(): Promise<void> {
    const handle = this.handle;
    this.handle = null;
    if (handle !== null) await handle.close();
  }

  /** Renames the file (if it exists) and remembers the new path. */
  async renameTo(path: string): Promise<void> {
    await this.closeHandle();
    if (this.fileBytes >= 0 || (await this.fs.stat(this.filePath)) !== null) await this.fs.rename(this.filePath, path);
    this.filePath = path;
  }

  async deleteIfExists(): Promise<void> {
    await this.closeHandle();
    if ((await this.fs.stat(this.filePath)) !== null) await this.fs.unlink(this.filePath);
    this.fileBytes = -1;
    this.persistedBytes = 0;
  }

  private async openHandle(): Promise<FileHandle> {
    if (this.handle === null) {
      this.handle = await this.fs.open(this.filePath, 'readWrite');
      if (this.fileBytes < 0) this.fileBytes = await this.handle.size();
    }
    return this.handle;
  }

  private ensureCapacity(entries: number): void {
    const needed = entries * this.entryBytes;
    if (needed <= this.buffer.length) return;
    const capacity = Math.max(needed, Math.min(this.maxEntries * this.entryBytes, this.buffer.length * 2));
    const grown = Buffer.alloc(capacity);
    this.buffer.copy(grown, 0, 0, this.sizeBytes);
    this.buffer = grown;
  }
}
