/**
 * A simulated FileSystem held in memory, for crash and fault tests.
 *
 * Model. Every file is an inode with two contents: what reads see now
 * (volatile, the page cache) and what would survive a power loss (durable).
 * Directories likewise have a volatile and a durable set of entries. Every
 * change that is not yet durable is kept, in issue order, in one pending
 * list:
 *   - data operations (write, truncate) become durable when their file is
 *     synced (`FileHandle.sync`);
 *   - namespace operations (create, rename, unlink, mkdir, removeTree)
 *     become durable when their directory is synced (`syncDir`), as POSIX
 *     requires; a new file's data is unreachable after a crash unless its
 *     directory entry is durable too.
 *
 * `crash()` throws away everything volatile: each file and directory falls
 * back to its durable state, optionally after replaying a random prefix of
 * the pending list, the last kept write cut at a random byte (a torn write).
 * Handles opened before a crash fail afterwards, as a restarted process would
 * not have them.
 *
 * Power cuts: `schedulePowerCut` crashes the disk at the n-th call from now
 * (that call and every later one fail with EIO, as if the process died with
 * the machine) until `powerOn`; a test then restarts its system on what
 * survived, at any point of its I/O rather than only between operations.
 *
 * Faults: `injectFault` fails chosen calls with ENOSPC or EIO (a failing write
 * may first write part of its bytes); `setCapacityBytes` turns every write
 * that would grow the disk past a limit into a short write plus ENOSPC;
 * `corrupt` zeroes or garbles a byte range of both contents (bit rot).
 */
import { posix } from 'node:path';
import type { FileHandle, FileStat, FileSystem, OpenMode } from './fs.js';
import type { Random } from './random.js';
import type { Clock } from './clock.js';

export type SimFaultCode = 'ENOSPC' | 'EIO';

export type SimOperation =
  | 'open'
  | 'read'
  | 'write'
  | 'truncate'
  | 'sync'
  | 'size'
  | 'readFile'
  | 'writeFileAtomic'
  | 'rename'
  | 'unlink'
  | 'removeTree'
  | 'mkdir'
  | 'readdir'
  | 'stat'
  | 'syncDir';

export interface SimFault {
  /** 'any': every call counts, whatever its operation. */
  operation: SimOperation | 'any';
  code: SimFaultCode;
  /** Only calls whose path contains this string. */
  pathIncludes?: string;
  /** Matching calls to let through before failing. Default 0. */
  skip?: number;
  /** How many matching calls fail. Default 1; Infinity for a permanent fault. */
  count?: number;
  /** For writes: bytes actually written before the error. Default 0. */
  partialBytes?: number;
}

export interface SimCrashOptions {
  /** Keep a random prefix of the unsynced operations, the last write possibly torn. Default false. */
  keepUnsyncedPrefix?: boolean;
}

export interface SimCrashReport {
  pendingOperations: number;
  keptOperations: number;
  /** Bytes kept of the torn write, or -1 when no write was torn. */
  tornWriteBytes: number;
}

/** Growable byte content with amortised O(1) appends. */
class Content {
  private storage: Buffer;
  length: number;

  constructor(initial?: Buffer) {
    this.storage = Buffer.alloc(Math.max(64, initial?.length ?? 0));
    this.length = 0;
    if (initial) this.write(initial, 0);
  }

  view(): Buffer {
    return this.storage.subarray(0, this.length);
  }

  copy(): Content {
    return new Content(this.view());
  }

  write(data: Uint8Array, position: number): void {
    const end = position + data.length;
    this.ensureCapacity(end);
    if (position > this.length) this.storage.fill(0, this.length, position);
    this.storage.set(data, position);
    this.length = Math.max(this.length, end);
  }

  truncate(size: number): void {
    if (size > this.length) {
      this.ensureCapacity(size);
      this.storage.fill(0, this.length, size);
    }
    this.length = size;
  }

  private ensureCapacity(size: number): void {
    if (size <= this.storage.length) return;
    const grown = Buffer.alloc(Math.max(size, this.storage.length * 2));
    this.storage.copy(grown, 0, 0, this.length);
    this.storage = grown;
  }
}

interface Inode {
  readonly id: number;
  volatile: Content;
  durable: Content;
  mtimeMs: number;
}

type Entry = { kind: 'dir' } | { kind: 'file'; inode: number };
/** Directory path -> (name -> entry). A directory exists iff its path is a key. */
type Namespace = Map<string, Map<string, Entry>>;

type DataOp =
  | { kind: 'write'; inode: number; position: number; data: Buffer }
  | { kind: 'truncate'; inode: number; size: number };
type NamespaceOp =
  | { kind: 'link'; dir: string; name: string; entry: Entry }
  | { kind: 'unlink'; dir: string; name: string }
  | { kind: 'rename'; fromDir: string; fromName: string; toDir: string; toName: string }
  | { kind: 'removeTree'; dir: string; name: string };
type PendingOp = DataOp | NamespaceOp;

const ROOT = '/';

export class SimFileSystem implements FileSystem {
  private readonly inodes = new Map<number, Inode>();
  private volatileNames: Namespace = new Map([[ROOT, new Map()]]);
  private durableNames: Namespace = new Map([[ROOT, new Map()]]);
  private pending: PendingOp[] = [];
  /**
   * Entries made durable by syncing their directory while that directory's own entry was not yet durable: on a
   * real disk the directory's contents are on disk and show once its entry is; a crash before then loses them.
   */
  private syncedOrphans: NamespaceOp[] = [];
  private faults: (SimFault & { skipLeft: number; countLeft: number })[] = [];
  private nextInode = 1;
  private generation = 0;
  private capacityBytes: number | null = null;
  private powerCut: { callsLeft: number; options: SimCrashOptions } | null = null;
  private poweredOff = false;
  /** Injected faults that have failed a call so far. */
  faultsFired = 0;
  /** What the last scheduled power cut dropped (null before one happens). */
  lastPowerCut: SimCrashReport | null = null;
  /** Calls per operation, for tests that want to know a path was exercised. */
  readonly callCounts = new Map<SimOperation, number>();

  constructor(
    private readonly random: Random,
    private readonly clock?: Clock,
  ) {}

  // ---- fault control -------------------------------------------------------

  injectFault(fault: SimFault): void {
    this.faults.push({ ...fault, skipLeft: fault.skip ?? 0, countLeft: fault.count ?? 1 });
  }

  clearFaults(): void {
    this.faults = [];
  }

  /** Crashes (as `crash(options)`) at the `afterCalls`-th FileSystem call from now; 0 cuts at the next call. */
  schedulePowerCut(options: SimCrashOptions & { afterCalls: number }): void {
    this.powerCut = { callsLeft: options.afterCalls, options };
  }

  get isPoweredOff(): boolean {
    return this.poweredOff;
  }

  /** Ends a power cut (or cancels one not reached yet): calls work again, on what was durable. */
  powerOn(): void {
    this.poweredOff = false;
    this.powerCut = null;
  }

  /** FileSystem calls so far, every operation together. */
  get totalCalls(): number {
    let total = 0;
    for (const count of this.callCounts.values()) total += count;
    return total;
  }

  /** Total bytes the disk holds (volatile view); `null` for unlimited. */
  setCapacityBytes(bytes: number | null): void {
    this.capacityBytes = bytes;
  }

  /** Bytes used by all files reachable in the volatile namespace. */
  usedBytes(): number {
    let used = 0;
    for (const entries of this.volatileNames.values()) {
      for (const entry of entries.values()) {
        if (entry.kind === 'file') used += this.inode(entry.inode).volatile.length;
      }
    }
    return used;
  }

  get pendingOperationCount(): number {
    return this.pending.length;
  }

  /** Loses everything not durable, as a power cut would. */
  crash(options: SimCrashOptions = {}): SimCrashReport {
    const pendingOperations = this.pending.length;
    let keptOperations = 0;
    let tornWriteBytes = -1;
    if (options.keepUnsyncedPrefix === true && pendingOperations > 0) {
      keptOperations = this.random.nextInt(pendingOperations + 1);
      for (let i = 0; i < keptOperations; i++) this.applyDurably(this.pending[i]!);
      const next = this.pending[keptOperations];
      if (next?.kind === 'write' && next.data.length > 1) {
        tornWriteBytes = this.random.nextInt(next.data.length);
        this.applyDurably({ ...next, data: next.data.subarray(0, tornWriteBytes) });
      }
    }
    this.pending = [];
    this.syncedOrphans = [];
    this.volatileNames = cloneNamespace(this.durableNames);
    this.collectGarbage();
    for (const inode of this.inodes.values()) inode.volatile = inode.durable.copy();
    this.generation++;
    return { pendingOperations, keptOperations, tornWriteBytes };
  }

  /** Overwrites bytes of a file in both contents: zeroes, or random garbage. */
  corrupt(path: string, options: { position: number; length: number; mode: 'zero' | 'garbage' }): void {
    const inode = this.fileInode(this.volatileNames, normalize(path));
    if (inode === null) throw errnoError('ENOENT', 'corrupt', path);
    const bytes =
      options.mode === 'zero' ? Buffer.alloc(options.length) : this.random.bytes(options.length);
    for (const content of [inode.volatile, inode.durable]) {
      const end = Math.min(content.length, options.position + options.length);
      if (end > options.position) content.write(bytes.subarray(0, end - options.position), options.position);
    }
  }

  /** The durable bytes of a file, or null if no durable entry exists (for test assertions). */
  durableContent(path: string): Buffer | null {
    const inode = this.fileInode(this.durableNames, normalize(path));
    return inode === null ? null : Buffer.from(inode.durable.view());
  }

  // ---- FileSystem ----------------------------------------------------------

  async open(path: string, mode: OpenMode): Promise<FileHandle> {
    const full = normalize(path);
    this.enter('open', full);
    const existing = this.lookup(this.volatileNames, full);
    if (existing?.kind === 'dir') throw errnoError('EISDIR', 'open', full);
    if (existing?.kind === 'file') return new SimFileHandle(this, full, existing.inode, this.generation);
    if (mode === 'read') throw errnoError('ENOENT', 'open', full);
    const inode = this.createFile(full);
    return new SimFileHandle(this, full, inode.id, this.generation);
  }

  async readFile(path: string): Promise<Buffer> {
    const full = normalize(path);
    this.enter('readFile', full);
    const inode = this.fileInode(this.volatileNames, full);
    if (inode === null) throw errnoError('ENOENT', 'readFile', full);
    return Buffer.from(inode.volatile.view());
  }

  async writeFileAtomic(path: string, data: Uint8Array): Promise<void> {
    const full = normalize(path);
    this.enter('writeFileAtomic', full);
    const temporary = `${full}.tmp`;
    const handle = await this.open(temporary, 'readWrite');
    await handle.truncate(0);
    await handle.write([data], 0);
    await handle.sync();
    await handle.close();
    await this.rename(temporary, full);
  }

  async rename(from: string, to: string): Promise<void> {
    const source = normalize(from);
    const target = normalize(to);
    this.enter('rename', source);
    if (this.lookup(this.volatileNames, source) === null) throw errnoError('ENOENT', 'rename', source);
    if (!this.volatileNames.has(posix.dirname(target))) throw errnoError('ENOENT', 'rename', target);
    this.record({
      kind: 'rename',
      fromDir: posix.dirname(source),
      fromName: posix.basename(source),
      toDir: posix.dirname(target),
      toName: posix.basename(target),
    });
  }

  async unlink(path: string): Promise<void> {
    const full = normalize(path);
    this.enter('unlink', full);
    const entry = this.lookup(this.volatileNames, full);
    if (entry === null) throw errnoError('ENOENT', 'unlink', full);
    if (entry.kind === 'dir') throw errnoError('EISDIR', 'unlink', full);
    this.record({ kind: 'unlink', dir: posix.dirname(full), name: posix.basename(full) });
  }

  async removeTree(path: string): Promise<void> {
    const full = normalize(path);
    this.enter('removeTree', full);
    if (full === ROOT || this.lookup(this.volatileNames, full) === null) return;
    this.record({ kind: 'removeTree', dir: posix.dirname(full), name: posix.basename(full) });
  }

  async mkdir(path: string): Promise<void> {
    const full = normalize(path);
    this.enter('mkdir', full);
    const missing: string[] = [];
    for (let dir = full; !this.volatileNames.has(dir); dir = posix.dirname(dir)) {
      if (this.lookup(this.volatileNames, dir)?.kind === 'file') throw errnoError('ENOTDIR', 'mkdir', dir);
      missing.push(dir);
    }
    for (const dir of missing.reverse()) {
      this.record({ kind: 'link', dir: posix.dirname(dir), name: posix.basename(dir), entry: { kind: 'dir' } });
    }
  }

  async readdir(path: string): Promise<string[]> {
    const full = normalize(path);
    this.enter('readdir', full);
    const entries = this.volatileNames.get(full);
    if (entries === undefined) throw errnoError('ENOENT', 'readdir', full);
    return [...entries.keys()].sort();
  }

  async stat(path: string): Promise<FileStat | null> {
    const full = normalize(path);
    this.enter('stat', full);
    const entry = full === ROOT ? ({ kind: 'dir' } as const) : this.lookup(this.volatileNames, full);
    if (entry === null) return null;
    if (entry.kind === 'dir') return { size: 0, mtimeMs: 0, isDirectory: true };
    const inode = this.inode(entry.inode);
    return { size: inode.volatile.length, mtimeMs: inode.mtimeMs, isDirectory: false };
  }

  async syncDir(path: string): Promise<void> {
    const full = normalize(path);
    this.enter('syncDir', full);
    if (!this.volatileNames.has(full)) throw errnoError('ENOENT', 'syncDir', full);
    this.makeDurable((op) => op.kind !== 'write' && op.kind !== 'truncate' && touchesDir(op, full));
  }

  // ---- used by SimFileHandle ----------------------------------------------

  /** Throws an injected fault for this call, if one matches (with `partialBytes` for a short write). */
  enter(operation: SimOperation, path: string): void {
    this.callCounts.set(operation, (this.callCounts.get(operation) ?? 0) + 1);
    if (this.powerCut !== null && this.powerCut.callsLeft-- <= 0) {
      this.lastPowerCut = this.crash(this.powerCut.options);
      this.powerCut = null;
      this.poweredOff = true;
    }
    if (this.poweredOff) throw errnoError('EIO', operation, `${path} (power is off)`);
    for (const fault of this.faults) {
      if ((fault.operation !== operation && fault.operation !== 'any') || fault.countLeft <= 0) continue;
      if (fault.pathIncludes !== undefined && !path.includes(fault.pathIncludes)) continue;
      if (fault.skipLeft > 0) {
        fault.skipLeft--;
        continue;
      }
      fault.countLeft--;
      this.faultsFired++;
      throw Object.assign(errnoError(fault.code, operation, path), { partialBytes: fault.partialBytes ?? 0 });
    }
  }

  checkGeneration(generation: number, operation: string, path: string): void {
    if (generation !== this.generation) throw errnoError('EBADF', operation, path);
  }

  inode(id: number): Inode {
    const inode = this.inodes.get(id);
    if (inode === undefined) throw new Error(`sim-fs: inode ${id} vanished`);
    return inode;
  }

  /** Applies a write to the volatile content and queues it; honours the capacity limit. */
  writeData(inodeId: number, chunks: readonly Uint8Array[], position: number, path: string): void {
    const inode = this.inode(inodeId);
    const data = Buffer.concat(chunks);
    const growth = Math.max(0, position + data.length - inode.volatile.length);
    if (this.capacityBytes !== null && growth > 0) {
      const free = Math.max(0, this.capacityBytes - this.usedBytes());
      if (growth > free) {
        const fits = Math.max(0, data.length - (growth - free));
        if (fits > 0) this.writeData(inodeId, [data.subarray(0, fits)], position, path);
        throw errnoError('ENOSPC', 'write', path);
      }
    }
    inode.volatile.write(data, position);
    inode.mtimeMs = this.clock?.nowMs() ?? 0;
    this.pending.push({ kind: 'write', inode: inodeId, position, data });
  }

  truncateData(inodeId: number, size: number): void {
    const inode = this.inode(inodeId);
    inode.volatile.truncate(size);
    inode.mtimeMs = this.clock?.nowMs() ?? 0;
    this.pending.push({ kind: 'truncate', inode: inodeId, size });
  }

  syncData(inodeId: number): void {
    this.makeDurable((op) => (op.kind === 'write' || op.kind === 'truncate') && op.inode === inodeId);
  }

  // ---- internals -----------------------------------------------------------

  private createFile(full: string): Inode {
    const dir = posix.dirname(full);
    if (!this.volatileNames.has(dir)) throw errnoError('ENOENT', 'open', full);
    const inode: Inode = {
      id: this.nextInode++,
      volatile: new Content(),
      durable: new Content(),
      mtimeMs: this.clock?.nowMs() ?? 0,
    };
    this.inodes.set(inode.id, inode);
    this.record({ kind: 'link', dir, name: posix.basename(full), entry: { kind: 'file', inode: inode.id } });
    return inode;
  }

  private record(op: NamespaceOp): void {
    applyNamespaceOp(this.volatileNames, op);
    this.pending.push(op);
  }

  private makeDurable(selected: (op: PendingOp) => boolean): void {
    const remaining: PendingOp[] = [];
    for (const op of this.pending) {
      if (selected(op)) this.applyDurably(op);
      else remaining.push(op);
    }
    this.pending = remaining;
  }

  private applyDurably(op: PendingOp): void {
    if (op.kind === 'write') this.inode(op.inode).durable.write(op.data, op.position);
    else if (op.kind === 'truncate') this.inode(op.inode).durable.truncate(op.size);
    else if (!this.durablyExists(op)) this.syncedOrphans.push(op);
    else {
      applyNamespaceOp(this.durableNames, op);
      if (op.kind === 'link' && op.entry.kind === 'dir') this.adoptOrphans();
    }
  }

  private durablyExists(op: NamespaceOp): boolean {
    if (op.kind === 'rename') return this.durableNames.has(op.fromDir) && this.durableNames.has(op.toDir);
    return this.durableNames.has(op.dir);
  }

  /** Synced entries of directories whose own entries have just become durable appear with them, in their order. */
  private adoptOrphans(): void {
    const waiting = this.syncedOrphans;
    this.syncedOrphans = [];
    for (const op of waiting) this.applyDurably(op);
  }

  private lookup(names: Namespace, full: string): Entry | null {
    if (full === ROOT) return { kind: 'dir' };
    return names.get(posix.dirname(full))?.get(posix.basename(full)) ?? null;
  }

  private fileInode(names: Namespace, full: string): Inode | null {
    const entry = this.lookup(names, full);
    return entry?.kind === 'file' ? this.inode(entry.inode) : null;
  }

  /** Forgets inodes no directory entry refers to any more (only safe when nothing is pending). */
  private collectGarbage(): void {
    const live = new Set<number>();
    for (const entries of this.durableNames.values()) {
      for (const entry of entries.values()) if (entry.kind === 'file') live.add(entry.inode);
    }
    for (const id of [...this.inodes.keys()]) if (!live.has(id)) this.inodes.delete(id);
  }
}

class SimFileHandle implements FileHandle {
  private closed = false;

  constructor(
    private readonly fs: SimFileSystem,
    readonly path: string,
    private readonly inodeId: number,
    private readonly generation: number,
  ) {}

  async read(buffer: Uint8Array, position: number): Promise<number> {
    this.check('read');
    this.fs.enter('read', this.path);
    const content = this.fs.inode(this.inodeId).volatile;
    const end = Math.min(content.length, position + buffer.length);
    if (end <= position) return 0;
    buffer.set(content.view().subarray(position, end), 0);
    return end - position;
  }

  async write(chunks: readonly Uint8Array[], position: number): Promise<void> {
    this.check('write');
    try {
      this.fs.enter('write', this.path);
    } catch (error) {
      const partial = (error as { partialBytes?: number }).partialBytes ?? 0;
      if (partial > 0) this.fs.writeData(this.inodeId, [Buffer.concat(chunks).subarray(0, partial)], position, this.path);
      throw error;
    }
    this.fs.writeData(this.inodeId, chunks, position, this.path);
  }

  async truncate(size: number): Promise<void> {
    this.check('truncate');
    this.fs.enter('truncate', this.path);
    this.fs.truncateData(this.inodeId, size);
  }

  async sync(): Promise<void> {
    this.check('sync');
    this.fs.enter('sync', this.path);
    this.fs.syncData(this.inodeId);
  }

  async size(): Promise<number> {
    this.check('size');
    this.fs.enter('size', this.path);
    return this.fs.inode(this.inodeId).volatile.length;
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private check(operation: SimOperation): void {
    if (this.closed) throw errnoError('EBADF', operation, this.path);
    this.fs.checkGeneration(this.generation, operation, this.path);
  }
}

function applyNamespaceOp(names: Namespace, op: NamespaceOp): void {
  switch (op.kind) {
    case 'link': {
      const entries = names.get(op.dir);
      if (entries === undefined) return; // parent never became durable: the entry is lost
      entries.set(op.name, op.entry);
      if (op.entry.kind === 'dir') names.set(posix.join(op.dir, op.name), new Map());
      return;
    }
    case 'unlink':
      names.get(op.dir)?.delete(op.name);
      return;
    case 'rename':
      renameEntry(names, op);
      return;
    case 'removeTree':
      removeSubtree(names, posix.join(op.dir, op.name));
      names.get(op.dir)?.delete(op.name);
      return;
  }
}

function renameEntry(names: Namespace, op: Extract<NamespaceOp, { kind: 'rename' }>): void {
  const entry = names.get(op.fromDir)?.get(op.fromName);
  const target = names.get(op.toDir);
  if (entry === undefined || target === undefined) return;
  names.get(op.fromDir)!.delete(op.fromName);
  const from = posix.join(op.fromDir, op.fromName);
  const to = posix.join(op.toDir, op.toName);
  if (target.get(op.toName)?.kind === 'dir') removeSubtree(names, to);
  target.set(op.toName, entry);
  if (entry.kind !== 'dir') return;
  for (const dir of [...names.keys()]) {
    if (dir === from || dir.startsWith(`${from}/`)) {
      names.set(to + dir.slice(from.length), names.get(dir)!);
      names.delete(dir);
    }
  }
}

function removeSubtree(names: Namespace, root: string): void {
  for (const dir of [...names.keys()]) if (dir === root || dir.startsWith(`${root}/`)) names.delete(dir);
}

function touchesDir(op: NamespaceOp, dir: string): boolean {
  if (op.kind === 'rename') return op.fromDir === dir || op.toDir === dir;
  return op.dir === dir;
}

function cloneNamespace(names: Namespace): Namespace {
  const copy: Namespace = new Map();
  for (const [dir, entries] of names) copy.set(dir, new Map(entries));
  return copy;
}

function normalize(path: string): string {
  return posix.resolve(ROOT, path);
}

function errnoError(code: string, syscall: string, path: string): NodeJS.ErrnoException {
  const error = new Error(`${code}: simulated ${syscall} failure, '${path}'`) as NodeJS.ErrnoException;
  error.code = code;
  error.syscall = syscall;
  error.path = path;
  return error;
}
