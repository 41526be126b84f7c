/**
 * TimeIndex: the `.timeindex` file, a sparse map from timestamp to the
 * offset from which to start searching for it.
 *
 * Format (Kafka's, byte-compatible): 12-byte entries, big-endian
 *   int64 timestamp        the segment's max timestamp so far
 *   int32 relativeOffset   offset of the batch holding that max - baseOffset
 * Timestamps strictly increase and offsets never decrease: an entry is added
 * (next to each offset-index entry, and once more when the segment stops
 * being active) only when the max timestamp grew.
 *
 * Search rule: `lookup(target)` returns the greatest entry whose timestamp
 * is <= target, or (NO_TIMESTAMP, baseOffset). An entry's offset is the last
 * offset of the first batch that reached its timestamp, so every batch before
 * that one holds only smaller timestamps: the first record with a timestamp
 * >= target is in that batch or later. The segment scans forward from the
 * offset-index position for that offset.
 *
 * Crash policy: see IndexFile; `sanityCheck` verifies the ordering and that
 * offsets lie in [baseOffset, nextOffset).
 */
import type { FileSystem } from '../io/fs.js';
import { readInt64, writeInt64 } from '../protocol/int64.js';
import { CorruptIndexError, InvalidOffsetError } from './errors.js';
import { IndexFile } from './index-file.js';

export const TIME_INDEX_ENTRY_BYTES = 12;
/** Kafka's RecordBatch.NO_TIMESTAMP. */
export const NO_TIMESTAMP = -1;
const INT32_MAX = 0x7fff_ffff;

export interface TimestampOffset {
  timestamp: number;
  offset: number;
}

export class TimeIndex extends IndexFile {
  constructor(fs: FileSystem, path: string, baseOffset: number, maxIndexBytes: number) {
    super(fs, path, baseOffset, maxIndexBytes, TIME_INDEX_ENTRY_BYTES);
  }

  timestampAt(entry: number): number {
    const at = entry * TIME_INDEX_ENTRY_BYTES;
    return readInt64(this.buffer, at);
  }

  relativeOffsetAt(entry: number): number {
    return this.buffer.readInt32BE(entry * TIME_INDEX_ENTRY_BYTES + 8);
  }

  entry(entry: number): TimestampOffset {
    return { timestamp: this.timestampAt(entry), offset: this.baseOffset + this.relativeOffsetAt(entry) };
  }

  /** The last entry, or (NO_TIMESTAMP, baseOffset) when empty. */
  get lastEntry(): TimestampOffset {
    return this.entries === 0 ? { timestamp: NO_TIMESTAMP, offset: this.baseOffset } : this.entry(this.entries - 1);
  }

  /**
   * Adds (timestamp, offset) if `timestamp` exceeds the last entry's. With
   * `skipFullCheck` the entry may go one past the cap (Kafka does this for
   * the final entry written when a segment stops being active).
   */
  maybeAppend(timestamp: number, offset: number, options: { skipFullCheck?: boolean } = {}): void {
    const last = this.lastEntry;
    if (this.entries > 0 && offset < last.offset) {
      throw new InvalidOffsetError(`time index entry offset ${offset} is before the last entry's ${last.offset} in ${this.path}`);
    }
    if (this.entries > 0 && timestamp < last.timestamp) {
      throw new InvalidOffsetError(`time index entry timestamp ${timestamp} is before the last entry's ${last.timestamp}`);
    }
    if (timestamp <= last.timestamp) return;
    const relativeOffset = offset - this.baseOffset;
    if (relativeOffset < 0 || relativeOffset > INT32_MAX) {
      throw new InvalidOffsetError(`offset ${offset} does not fit time index ${this.path} based at ${this.baseOffset}`);
    }
    const at = this.nextEntryPosition({ ignoreCap: options.skipFullCheck === true });
    writeInt64(this.buffer, at, timestamp);
    this.buffer.writeInt32BE(relativeOffset, at + 8);
  }

  /** Greatest entry with timestamp <= target, else (NO_TIMESTAMP, baseOffset). */
  lookup(targetTimestamp: number): TimestampOffset {
    const found = this.floorEntry(targetTimestamp, (entry) => this.timestampAt(entry));
    return found < 0 ? { timestamp: NO_TIMESTAMP, offset: this.baseOffset } : this.entry(found);
  }

  /** Removes every entry whose offset is >= `offset`. */
  truncateTo(offset: number): void {
    const relative = offset - this.baseOffset;
    // Offsets never decrease, so the entries to keep are a prefix found by binary search.
    this.truncateToEntries(this.floorEntry(relative - 1, (entry) => this.relativeOffsetAt(entry)) + 1);
  }

  /** Throws CorruptIndexError unless timestamps increase, offsets do not decrease and all lie below `nextOffset`. */
  sanityCheck(nextOffset: number): void {
    let previousTimestamp = NO_TIMESTAMP;
    let previousOffset = 0;
    for (let entry = 0; entry < this.entries; entry++) {
      const timestamp = this.timestampAt(entry);
      const relativeOffset = this.relativeOffsetAt(entry);
      if (timestamp <= previousTimestamp || relativeOffset < previousOffset) {
        throw new CorruptIndexError(`${this.path}: entry ${entry} (${timestamp}, ${relativeOffset}) does not increase`);
      }
      if (this.baseOffset + relativeOffset >= nextOffset) {
        throw new CorruptIndexError(`${this.path}: entry ${entry} names offset ${this.baseOffset + relativeOffset}, past the segment end ${nextOffset}`);
      }
      previousTimestamp = timestamp;
      previousOffset = relativeOffset;
    }
  }
}
