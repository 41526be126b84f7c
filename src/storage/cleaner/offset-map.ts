/**
 * SkimpyOffsetMap: the cleaner's key -> latest offset map, held in one fixed
 * buffer of log.cleaner.dedupe.buffer.size / log.cleaner.threads bytes, as
 * Kafka's SkimpyOffsetMap is.
 *
 * Layout: `slots` entries of 24 bytes, an MD5 digest of the key (16 bytes)
 * followed by the offset (int64 as a double, 8 bytes). An all-zero digest
 * marks an empty slot. Keys are identified by digest alone: two keys with
 * the same MD5 share an entry, the risk Kafka accepts too.
 *
 * Search rule: open addressing; attempt n reads the int32 at digest byte
 * min(n, 12), plus max(0, n - 12), modulo the slot count.
 */
import { hash as oneShotHash } from 'node:crypto';

const HASH_BYTES = 16;
const ENTRY_BYTES = HASH_BYTES + 8;

export class SkimpyOffsetMap {
  readonly slots: number;
  private readonly buffer: Buffer;
  private entries = 0;
  /** Byte positions of used slots, so `clear` touches only them. */
  private readonly usedPositions: number[] = [];
  /** Last offset read while building the map (-1 before any). */
  latestOffset = -1;

  constructor(memoryBytes: number) {
    this.slots = Math.floor(memoryBytes / ENTRY_BYTES);
    if (this.slots < 1) throw new RangeError(`an offset map of ${memoryBytes} bytes holds no entry`);
    this.buffer = Buffer.alloc(this.slots * ENTRY_BYTES);
  }

  get size(): number {
    return this.entries;
  }

  /** Fraction of slots in use. */
  get utilization(): number {
    return this.entries / this.slots;
  }

  put(key: Buffer, offset: number): void {
    const hash = digest(key);
    for (let attempt = 0; ; attempt++) {
      const position = this.positionOf(hash, attempt);
      if (this.isEmpty(position)) {
        hash.copy(this.buffer, position);
        this.buffer.writeDoubleBE(offset, position + HASH_BYTES);
        this.usedPositions.push(position);
        this.entries++;
        break;
      }
      if (this.holds(position, hash)) {
        this.buffer.writeDoubleBE(offset, position + HASH_BYTES);
        break;
      }
    }
    this.latestOffset = offset;
  }

  /** The latest offset recorded for `key`, or -1. */
  get(key: Buffer): number {
    const hash = digest(key);
    // A full map has no empty slot to stop at; every slot is tried at most once per attempt index.
    for (let attempt = 0; attempt < this.slots + HASH_BYTES; attempt++) {
      const position = this.positionOf(hash, attempt);
      if (this.isEmpty(position)) return -1;
      if (this.holds(position, hash)) return this.buffer.readDoubleBE(position + HASH_BYTES);
    }
    return -1;
  }

  updateLatestOffset(offset: number): void {
    this.latestOffset = offset;
  }

  clear(): void {
    for (const position of this.usedPositions) this.buffer.fill(0, position, position + ENTRY_BYTES);
    this.usedPositions.length = 0;
    this.entries = 0;
    this.latestOffset = -1;
  }

  private positionOf(hash: Buffer, attempt: number): number {
    const probe = hash.readInt32BE(Math.min(attempt, HASH_BYTES - 4)) + Math.max(0, attempt - HASH_BYTES + 4);
    return (Math.abs(probe) % this.slots) * ENTRY_BYTES;
  }

  private isEmpty(position: number): boolean {
    for (let index = 0; index < HASH_BYTES; index++) if (this.buffer[position + index] !== 0) return false;
    return true;
  }

  private holds(position: number, hash: Buffer): boolean {
    return this.buffer.compare(hash, 0, HASH_BYTES, position, position + HASH_BYTES) === 0;
  }
}

function digest(key: Buffer): Buffer {
  const hash = oneShotHash('md5', key, 'buffer');
  // An all-zero digest would read as an empty slot; flip one bit (a 2^-128 event).
  if (hash.every((byte) => byte === 0)) hash[0] = 1;
  return hash;
}
