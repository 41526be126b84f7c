/**
 * Walks the record batches of a `.log` file from a byte position, reading
 * the file in blocks so a scan costs one read per block, not per batch.
 *
 * Two modes: `headers` yields each batch with at least its 61-byte header in
 * memory (offset lookups, LEO, time search); `whole` yields each batch whole
 * (recovery, CRC checks, dump-log). A batch larger than the block is read on
 * its own. The scanner stops at the first batch that is torn (runs past the
 * end) or whose declared size is impossible, and reports where and why, so
 * recovery can truncate there.
 */
import type { FileHandle } from '../io/fs.js';
import { BATCH_HEADER_BYTES, BATCH_OVERHEAD_BYTES, readBatchHeader, type BatchHeader } from '../protocol/records/batch.js';

export interface ScannedBatch {
  /** Byte position of the batch in the file. */
  position: number;
  header: BatchHeader;
  /** Buffer holding the batch header (and, in `whole` mode, the batch) at `offsetInBuffer`. */
  buffer: Buffer;
  offsetInBuffer: number;
}

export type ScanStop =
  | { kind: 'end' }
  /** Fewer bytes left than the batch declares (a torn write), or than a batch header. */
  | { kind: 'torn'; position: number }
  /** A declared batch size below the header size: garbage. */
  | { kind: 'corrupt'; position: number; sizeBytes: number };

export interface ScanOptions {
  startPosition: number;
  /** Exclusive end (the segment's size). */
  endPosition: number;
  mode: 'headers' | 'whole';
  /** Read granularity. Default 8 KiB for headers, 1 MiB for whole batches. */
  blockBytes?: number;
}

const HEADER_BLOCK_BYTES = 8 * 1024;
const WHOLE_BLOCK_BYTES = 1024 * 1024;

export class BatchScanner {
  private block: Buffer = Buffer.alloc(0);
  /** File position of block[0]. */
  private blockStart = 0;
  private blockLength = 0;
  private position: number;
  private readonly blockBytes: number;
  stop: ScanStop | null = null;

  constructor(
    private readonly handle: FileHandle,
    private readonly options: ScanOptions,
  ) {
    this.position = options.startPosition;
    this.blockBytes = options.blockBytes ?? (options.mode === 'whole' ? WHOLE_BLOCK_BYTES : HEADER_BLOCK_BYTES);
  }

  /** Position of the next batch (after the last one yielded). */
  get nextPosition(): number {
    return this.position;
  }

  /** The next batch, or null at the end or at a torn / corrupt batch (see `stop`). */
  async next(): Promise<ScannedBatch | null> {
    if (this.stop !== null) return null;
    const position = this.position;
    const end = this.options.endPosition;
    if (position >= end) return this.finish({ kind: 'end' });
    if (end - position < BATCH_OVERHEAD_BYTES) return this.finish({ kind: 'torn', position });
    if (!(await this.ensure(position, BATCH_OVERHEAD_BYTES))) return this.finish({ kind: 'torn', position });
    const sizeBytes = this.block.readInt32BE(position - this.blockStart + 8) + BATCH_OVERHEAD_BYTES;
    if (sizeBytes < BATCH_HEADER_BYTES) return this.finish({ kind: 'corrupt', position, sizeBytes });
    if (sizeBytes > end - position) return this.finish({ kind: 'torn', position });
    const needed = this.options.mode === 'whole' ? sizeBytes : BATCH_HEADER_BYTES;
    if (!(await this.ensure(position, needed))) return this.finish({ kind: 'torn', position });
    const offsetInBuffer = position - this.blockStart;
    this.position = position + sizeBytes;
    return { position, header: readBatchHeader(this.block, offsetInBuffer), buffer: this.block, offsetInBuffer };
  }

  private finish(stop: ScanStop): null {
    this.stop = stop;
    return null;
  }

  /** Makes bytes [position, position + length) available in the block; false if the file is shorter. */
  private async ensure(position: number, length: number): Promise<boolean> {
    if (position >= this.blockStart && position + length <= this.blockStart + this.blockLength) return true;
    const readBytes = Math.min(Math.max(this.blockBytes, length), this.options.endPosition - position);
    if (readBytes < length) return false;
    if (this.block.length < readBytes) this.block = Buffer.allocUnsafe(readBytes);
    else this.block = Buffer.allocUnsafe(this.block.length); // a fresh block: yielded views stay valid
    this.blockStart = position;
    this.blockLength = await this.handle.read(this.block.subarray(0, readBytes), position);
    return this.blockLength >= length;
  }
}
