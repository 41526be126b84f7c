/**
 * The network seam: TCP listeners and connections as the broker and client
 * see them. A simulator substitutes an in-process network that can delay,
 * drop or partition traffic.
 */
import * as net from 'node:net';

export interface Connection {
  readonly remoteAddress: string;
  readonly remotePort: number;
  /** Queues bytes for sending; returns false when the kernel buffer is full (wait for 'drain'). */
  write(chunks: readonly Uint8Array[]): boolean;
  onData(listener: (data: Buffer) => void): void;
  onDrain(listener: () => void): void;
  onClose(listener: (error?: Error) => void): void;
  /** Stops delivering data until resume() (backpressure on a reader). */
  pause(): void;
  resume(): void;
  /** Bytes queued for sending but not yet handed to the kernel. */
  readonly pendingWriteBytes: number;
  /** Closes after queued bytes are sent. */
  end(): void;
  /** Closes at once. */
  destroy(): void;
}

export interface Listener {
  readonly host: string;
  readonly port: number;
  close(): Promise<void>;
}

export interface ListenOptions {
  host: string;
  port: number;
  /**
   * A connection that could not be accepted (EMFILE: out of descriptors, and
   * libuv had no spare one to accept it with and close it). The listener
   * keeps listening.
   */
  onAcceptError(error: Error): void;
}

export interface Network {
  listen(options: ListenOptions, onConnection: (connection: Connection) => void): Promise<Listener>;
  connect(options: { host: string; port: number }): Promise<Connection>;
}

class TcpConnection implements Connection {
  constructor(private readonly socket: net.Socket) {
    socket.setNoDelay(true);
  }

  get remoteAddress(): string {
    return this.socket.remoteAddress ?? '';
  }

  get remotePort(): number {
    return this.socket.remotePort ?? 0;
  }

  get pendingWriteBytes(): number {
    return this.socket.writableLength;
  }

  write(chunks: readonly Uint8Array[]): boolean {
    if (this.socket.destroyed) return false;
    if (chunks.length === 1) return this.socket.write(chunks[0]!);
    this.socket.cork();
    for (const chunk of chunks) this.socket.write(chunk);
    this.socket.uncork();
    return this.socket.writableLength < this.socket.writableHighWaterMark;
  }

  onData(listener: (data: Buffer) => void): void {
    this.socket.on('data', listener);
  }

  onDrain(listener: () => void): void {
    this.socket.on('drain', listener);
  }

  onClose(listener: (error?: Error) => void): void {
    let failure: Error | undefined;
    this.socket.on('error', (error) => {
      failure = error;
    });
    this.socket.on('close', () => listener(failure));
  }

  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  end(): void {
    this.socket.end();
  }

  destroy(): void {
    this.socket.destroy();
  }
}

export const realNetwork: Network = {
  listen(options, onConnection) {
    return new Promise((resolve, reject) => {
      const server = net.createServer((socket) => {
        socket.on('error', () => undefined);
        onConnection(new TcpConnection(socket));
      });
      server.once('error', reject);
      server.listen(options.port, options.host, () => {
        // Once listening, the server's only errors are failed accepts; unheard, one would end the process.
        server.off('error', reject);
        server.on('error', (error) => options.onAcceptError(error));
        const address = server.address() as net.AddressInfo;
        resolve({
          host: options.host,
          port: address.port,
          close: () => new Promise<void>((done) => server.close(() => done())),
        });
      });
    });
  },
  connect(options) {
    return new Promise((resolve, reject) => {
      const socket = net.connect(options.port, options.host);
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(new TcpConnection(socket));
      });
    });
  },
};
