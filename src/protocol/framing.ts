/**
 * Kafka's framing: an int32 size, then that many bytes. FrameAssembler cuts
 * complete frames out of a byte stream that arrives in arbitrary chunks.
 *
 * Complete frames are returned as views of the received buffers. The start
 * of an incomplete frame is held as views too (no copy per chunk) and joined
 * once, when the frame is whole, so a large frame arriving in many small
 * chunks is copied once rather than once per chunk. A size outside
 * [frameBytesMin, frameBytesMax] is reported as soon as its 4 bytes are in.
 */

export interface FrameLimits {
  frameBytesMin: number;
  frameBytesMax: number;
}

export type FrameResult = { frames: Buffer[] } | { invalidSize: number };

export class FrameAssembler {
  private partialChunks: Buffer[] = [];
  private partialBytes = 0;
  /** Total bytes (size prefix included) of the held frame, 0 until its size is known. */
  private partialFrameBytes = 0;

  constructor(private readonly limits: FrameLimits) {}

  /** True while the start of a frame has arrived but not its end. */
  get holdingPartialFrame(): boolean {
    return this.partialBytes > 0;
  }

  /** The frames (without their size prefix) that `data` completes, in order. */
  push(data: Buffer): FrameResult {
    const buffer = this.joinPartialFrame(data);
    if (typeof buffer === 'number') return { invalidSize: buffer };
    const frames: Buffer[] = [];
    if (buffer === null) return { frames };
    let offset = 0;
    while (buffer.length - offset >= 4) {
      const size = buffer.readInt32BE(offset);
      if (!this.accepts(size)) return { invalidSize: size };
      if (buffer.length - offset < 4 + size) break;
      frames.push(buffer.subarray(offset + 4, offset + 4 + size));
      offset += 4 + size;
    }
    if (offset < buffer.length) this.holdPartialFrame(buffer.subarray(offset));
    return { frames };
  }

  private accepts(size: number): boolean {
    return size >= this.limits.frameBytesMin && size <= this.limits.frameBytesMax;
  }

  private holdPartialFrame(piece: Buffer): void {
    this.partialChunks = [piece];
    this.partialBytes = piece.length;
    this.partialFrameBytes = piece.length >= 4 ? 4 + piece.readInt32BE(0) : 0;
  }

  /** `data`, prefixed by a held partial frame once that frame is complete; null while it is not; an invalid size. */
  private joinPartialFrame(data: Buffer): Buffer | null | number {
    if (this.partialBytes === 0) return data;
    this.partialChunks.push(data);
    this.partialBytes += data.length;
    if (this.partialFrameBytes === 0 && this.partialBytes >= 4) {
      const size = Buffer.concat(this.partialChunks, this.partialBytes).readInt32BE(0);
      if (!this.accepts(size)) return size;
      this.partialFrameBytes = 4 + size;
    }
    if (this.partialFrameBytes === 0 || this.partialBytes < this.partialFrameBytes) return null;
    const joined = Buffer.concat(this.partialChunks, this.partialBytes);
    this.partialChunks = [];
    this.partialBytes = 0;
    this.partialFrameBytes = 0;
    return joined;
  }
}
