/**
 * The file system seam. Storage code opens files through this interface so
 * the simulator can substitute a FileSystem that tears writes, loses unsynced
 * data on a simulated crash, or fails calls (disk full, EIO).
 *
 * Positions and sizes are byte offsets as `number` (files stay far below 2^53).
 */
import * as fsp from 'node:fs/promises';
import * as fs from 'node:fs';

export interface FileStat {
  size: number;
  mtimeMs: number;
  isDirectory: boolean;
}

export interface FileHandle {
  readonly path: string;
  /** Reads up to `buffer.length` bytes at `position`; returns how many were read (fewer only at end of file). */
  read(buffer: Uint8Array, position: number): Promise<number>;
  /** Writes every byte of `chunks`, in order, starting at `position`. */
  write(chunks: readonly Uint8Array[], position: number): Promise<void>;
  truncate(size: number): Promise<void>;
  /** Flushes written data to stable storage (fsync). */
  sync(): Promise<void>;
  size(): Promise<number>;
  close(): Promise<void>;
}

export type OpenMode =
  /** Existing file, read only. */
  | 'read'
  /** Existing file or a new empty one, read and write. */
  | 'readWrite';

export interface FileSystem {
  open(path: string, mode: OpenMode): Promise<FileHandle>;
  readFile(path: string): Promise<Buffer>;
  /** Replaces `path` atomically: writes a temporary file, syncs it, renames it over `path`. */
  writeFileAtomic(path: string, data: Uint8Array): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  /** Removes a directory tree; no error if it is absent. */
  removeTree(path: string): Promise<void>;
  mkdir(path: string): Promise<void>;
  readdir(path: string): Promise<string[]>;
  /** `null` when nothing exists at `path`. */
  stat(path: string): Promise<FileStat | null>;
  /** Makes renames and creations inside a directory durable. */
  syncDir(path: string): Promise<void>;
}

class RealFileHandle implements FileHandle {
  constructor(
    readonly path: string,
    private readonly handle: fsp.FileHandle,
  ) {}

  async read(buffer: Uint8Array, position: number): Promise<number> {
    let filled = 0;
    while (filled < buffer.length) {
      const { bytesRead } = await this.handle.read(buffer, filled, buffer.length - filled, position + filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return filled;
  }

  async write(chunks: readonly Uint8Array[], position: number): Promise<void> {
    let offset = position;
    let pending = chunks.filter((chunk) => chunk.length > 0);
    while (pending.length > 0) {
      const { bytesWritten } = await this.handle.writev(pending as Uint8Array[], offset);
      offset += bytesWritten;
      pending = dropWritten(pending, bytesWritten);
    }
  }

  truncate(size: number): Promise<void> {
    return this.handle.truncate(size);
  }

  sync(): Promise<void> {
    return this.handle.sync();
  }

  async size(): Promise<number> {
    return (await this.handle.stat()).size;
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}

/** Removes the first `written` bytes from a chunk list, after a short writev. */
function dropWritten(chunks: Uint8Array[], written: number): Uint8Array[] {
  let remaining = written;
  let index = 0;
  while (index < chunks.length && remaining >= chunks[index]!.length) {
    remaining -= chunks[index]!.length;
    index++;
  }
  const rest = chunks.slice(index);
  if (rest.length > 0 && remaining > 0) rest[0] = rest[0]!.subarray(remaining);
  return rest;
}

export const realFileSystem: FileSystem = {
  async open(path, mode) {
    const flags = mode === 'read' ? 'r' : fs.existsSync(path) ? 'r+' : 'w+';
    return new RealFileHandle(path, await fsp.open(path, flags));
  },
  readFile: (path) => fsp.readFile(path),
  async writeFileAtomic(path, data) {
    const temporary = `${path}.tmp`;
    const handle = await fsp.open(temporary, 'w');
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fsp.rename(temporary, path);
  },
  rename: (from, to) => fsp.rename(from, to),
  unlink: (path) => fsp.unlink(path),
  removeTree: (path) => fsp.rm(path, { recursive: true, force: true }),
  async mkdir(path) {
    await fsp.mkdir(path, { recursive: true });
  },
  readdir: (path) => fsp.readdir(path),
  async stat(path) {
    try {
      const stats = await fsp.stat(path);
      return { size: stats.size, mtimeMs: stats.mtimeMs, isDirectory: stats.isDirectory() };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  },
  async syncDir(path) {
    const handle = await fsp.open(path, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  },
};

/**
 * `base` without fsync: sync and syncDir return at once, and writeFileAtomic
 * still replaces the file by a rename, unsynced. Data reaches the page cache
 * only, so it survives the process (a kill) but not the machine (a power
 * cut). For embedded test clusters that opt out of durability
 * (startCluster({ durable: false })); Kafka's quorum needs its fsyncs.
 */
export function unsyncedFileSystem(base: FileSystem): FileSystem {
  // Each call names its method on `base`: a class's methods (SimFileSystem's) do not spread.
  return {
    readFile: (path) => base.readFile(path),
    rename: (from, to) => base.rename(from, to),
    unlink: (path) => base.unlink(path),
    removeTree: (path) => base.removeTree(path),
    mkdir: (path) => base.mkdir(path),
    readdir: (path) => base.readdir(path),
    stat: (path) => base.stat(path),
    async open(path, mode) {
      const file = await base.open(path, mode);
      return {
        path: file.path,
        read: (buffer, position) => file.read(buffer, position),
        write: (chunks, position) => file.write(chunks, position),
        truncate: (size) => file.truncate(size),
        sync: async () => undefined,
        size: () => file.size(),
        close: () => file.close(),
      };
    },
    async writeFileAtomic(path, data) {
      const temporary = `${path}.tmp`;
      const file = await base.open(temporary, 'readWrite');
      try {
        await file.truncate(0);
        await file.write([data], 0);
      } finally {
        await file.close();
      }
      await base.rename(temporary, path);
    },
    syncDir: async () => undefined,
  };
}
