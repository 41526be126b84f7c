/**
 * OffsetIndex: the `.index` file, a sparse map from offset to the position in
 * the `.log` file of the batch holding it.
 *
 * Format (Kafka's, byte-compatible): 8-byte entries, big-endian
 *   int32 relativeOffset   batch lastOffset - segment baseOffset
 *   int32 position         byte position of that batch in the .log file
 * Entries are strictly increasing in both fields. The segment adds an entry
 * for a batch once more than index.interval.bytes were appended since the
 * previous entry, so the first batch of a segment has none.
 *
 * Search rule: `lookup(target)` returns the greatest entry whose offset is
 * <= target, or (baseOffset, 0) when there is none. The batch at that
 * position ends at or before the target; scanning forward from it reaches
 * the batch that holds the target.
 *
 * Crash policy: see IndexFile. `sanityCheck` verifies the ordering and that
 * positions lie inside the log; the segment also checks the last entry
 * against the batch header it points at. A failed check means rebuild.
 */
import type { FileSystem } from '../io/fs.js';
import { CorruptIndexError, InvalidOffsetError } from './errors.js';
import { IndexFile } from './index-file.js';

export const OFFSET_INDEX_ENTRY_BYTES = 8;
const INT32_MAX = 0x7fff_ffff;

export interface OffsetPosition {
  offset: number;
  position: number;
}

export class OffsetIndex extends IndexFile {
  constructor(fs: FileSystem, path: string, baseOffset: number, maxIndexBytes: number) {
    super(fs, path, baseOffset, maxIndexBytes, OFFSET_INDEX_ENTRY_BYTES);
  }

  relativeOffsetAt(entry: number): number {
    return this.buffer.readInt32BE(entry * OFFSET_INDEX_ENTRY_BYTES);
  }

  positionAt(entry: number): number {
    return this.buffer.readInt32BE(entry * OFFSET_INDEX_ENTRY_BYTES + 4);
  }

  entry(entry: number): OffsetPosition {
    return { offset: this.baseOffset + this.relativeOffsetAt(entry), position: this.positionAt(entry) };
  }

  /** The last entry, or (baseOffset, 0) when empty. */
  get lastEntry(): OffsetPosition {
    return this.entries === 0 ? { offset: this.baseOffset, position: 0 } : this.entry(this.entries - 1);
  }

  /** Adds an entry; `offset` and `position` must exceed the last entry's. */
  append(offset: number, position: number): void {
    const relativeOffset = offset - this.baseOffset;
    if (relativeOffset < 0 || relativeOffset > INT32_MAX) {
      throw new InvalidOffsetError(`offset ${offset} does not fit index ${this.path} based at ${this.baseOffset}`);
    }
    if (this.entries > 0 && (relativeOffset <= this.relativeOffsetAt(this.entries - 1) || position <= this.positionAt(this.entries - 1))) {
      throw new InvalidOffsetError(
        `entry (${offset}, ${position}) is not after the last entry (${this.lastEntry.offset}, ${this.lastEntry.position}) in ${this.path}`,
      );
    }
    const at = this.nextEntryPosition();
    this.buffer.writeInt32BE(relativeOffset, at);
    this.buffer.writeInt32BE(position, at + 4);
  }

  /** Greatest entry with offset <= target, else (baseOffset, 0). */
  lookup(targetOffset: number): OffsetPosition {
    const found = this.floorEntry(targetOffset - this.baseOffset, (entry) => this.relativeOffsetAt(entry));
    return found < 0 ? { offset: this.baseOffset, position: 0 } : this.entry(found);
  }

  /** Removes every entry whose offset is >= `offset`. */
  truncateTo(offset: number): void {
    const relative = offset - this.baseOffset;
    const kept = this.floorEntry(relative - 1, (entry) => this.relativeOffsetAt(entry)) + 1;
    this.truncateToEntries(kept);
  }

  /** Throws CorruptIndexError unless entries increase strictly and point inside a log of `logSizeBytes`. */
  sanityCheck(logSizeBytes: number): void {
    let previousOffset = -1;
    let previousPosition = -1;
    for (let entry = 0; entry < this.entries; entry++) {
      const relativeOffset = this.relativeOffsetAt(entry);
      const position = this.positionAt(entry);
      if (relativeOffset <= previousOffset || position <= previousPosition) {
        throw new CorruptIndexError(`${this.path}: entry ${entry} (${relativeOffset}, ${position}) does not increase`);
      }
      if (position >= logSizeBytes) {
        throw new CorruptIndexError(`${this.path}: entry ${entry} points at ${position}, past the log size ${logSizeBytes}`);
      }
      previousOffset = relativeOffset;
      previousPosition = position;
    }
  }
}
