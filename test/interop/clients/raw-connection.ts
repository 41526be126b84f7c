/**
 * A raw TCP connection to a broker for hostile-client tests: writes any
 * bytes (valid frames, garbage, half a frame), half-closes, and hands back
 * response frames (without their size) in arrival order, or null once the
 * broker has closed the connection. Uses node:net directly (test code).
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { FrameAssembler } from '../../../src/protocol/framing.js';

export class RawConnection {
  /** Joins each response once, however many chunks it arrives in (a 50 MiB fetch response is ~800 chunks). */
  private readonly assembler = new FrameAssembler({ frameBytesMin: 0, frameBytesMax: 0x7fffffff });
  private readonly frames: Buffer[] = [];
  private readonly waiters: ((frame: Buffer | null) => void)[] = [];
  private closedFlag = false;
  readonly closed: Promise<void>;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (data: Buffer) => this.receive(data));
    socket.on('error', () => undefined);
    this.closed = new Promise((resolve) => socket.once('close', () => {
      this.closedFlag = true;
      for (const waiter of this.waiters.splice(0)) waiter(null);
      resolve();
    }));
  }

  static open(bootstrap: string): Promise<RawConnection> {
    const [host, port] = bootstrap.split(':');
    return new Promise((resolve, reject) => {
      const socket = connect({ host: host!, port: Number(port) });
      socket.once('connect', () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  get isClosed(): boolean {
    return this.closedFlag;
  }

  private receive(data: Buffer): void {
    const result = this.assembler.push(data);
    assert.ok('frames' in result, `a response frame of ${'invalidSize' in result ? result.invalidSize : '?'} bytes`);
    for (const view of result.frames) {
      const frame = Buffer.from(view);
      const waiter = this.waiters.shift();
      if (waiter !== undefined) waiter(frame);
      else this.frames.push(frame);
    }
  }

  /** Writes; resolves once the bytes are handed to the kernel (false if the socket is gone). */
  write(data: Buffer | readonly Buffer[]): Promise<boolean> {
    if (this.socket.destroyed) return Promise.resolve(false);
    const bytes = Buffer.isBuffer(data) ? data : Buffer.concat(data as Buffer[]);
    return new Promise((resolve) => this.socket.write(bytes, (error) => resolve(error == null)));
  }

  /** The next response frame, or null once closed. */
  next(): Promise<Buffer | null> {
    const frame = this.frames.shift();
    if (frame !== undefined) return Promise.resolve(frame);
    if (this.closedFlag) return Promise.resolve(null);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Sends FIN (half-close): the broker sees end of stream. */
  end(): void {
    this.socket.end();
  }

  destroy(): void {
    this.socket.destroy();
  }
}
