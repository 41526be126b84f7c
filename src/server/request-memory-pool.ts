/**
 * Kafka's request memory pool, `queued.max.request.bytes`: the bytes of the
 * requests the broker has read but not yet answered, counted across every
 * connection. At -1 (Kafka's default) or 0 the pool is unbounded.
 *
 * Like Kafka's non-strict SimpleMemoryPool, a request is admitted while any
 * memory is left, even one that overdraws the pool; once the pool is
 * exhausted, no connection starts reading a new request until answered
 * requests give their bytes back. A connection in the middle of a request
 * reads that request to its end (Kafka has already allocated its buffer), so
 * partly received requests can never hold the pool forever.
 */
export class RequestMemoryPool {
  private availableBytes: number;
  private readonly listeners: ((exhausted: boolean) => void)[] = [];

  constructor(readonly sizeBytes: number) {
    if (Number.isNaN(sizeBytes)) throw new Error(`queued.max.request.bytes ${sizeBytes} is not a size`);
    this.availableBytes = sizeBytes;
  }

  get bounded(): boolean {
    return this.sizeBytes > 0;
  }

  get exhausted(): boolean {
    return this.bounded && this.availableBytes <= 0;
  }

  /** Called with true when the pool runs out, and with false when memory is back. */
  onChange(listener: (exhausted: boolean) => void): void {
    this.listeners.push(listener);
  }

  /** Takes a read request's bytes; never refuses (the caller stops reading once the pool is exhausted). */
  take(bytes: number): void {
    if (!this.bounded) return;
    const wasExhausted = this.exhausted;
    this.availableBytes -= bytes;
    if (!wasExhausted && this.exhausted) this.notify(true);
  }

  /** Gives back the bytes of an answered (or dropped) request. */
  give(bytes: number): void {
    if (!this.bounded) return;
    const wasExhausted = this.exhausted;
    this.availableBytes += bytes;
    if (this.availableBytes > this.sizeBytes) throw new Error(`request memory pool over-released: ${this.availableBytes} of ${this.sizeBytes} bytes available`);
    if (wasExhausted && !this.exhausted) this.notify(false);
  }

  private notify(exhausted: boolean): void {
    for (const listener of this.listeners) listener(exhausted);
  }
}
