/**
 * The network seam: TCP listeners and connections as the broker and client
 * see them. A simulator substitutes an in-process network that can delay,
 * drop or partition traffic.
 */
import * as net from 'node:net';
import * as tls from 'node:tls';

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
  /** On a TLS connection, what the handshake established about the client; null on plain TCP. */
  readonly tlsPeer: TlsPeer | null;
  /** Bytes queued for sending but not yet handed to the kernel. */
  readonly pendingWriteBytes: number;
  /**
   * Bytes handed to the socket's write queue but not yet to the kernel, as
   * libuv counts them: unlike pendingWriteBytes it falls while one large
   * chunk is being written (Node counts a chunk as pending until all of it
   * is written). Absent where no such count exists.
   */
  readonly writeQueueBytes?: number | undefined;
  /** Closes after queued bytes are sent; what the peer sends from then on is dropped unread. */
  end(): void;
  /** Closes at once. */
  destroy(): void;
}

export interface TlsPeer {
  /** The client's certificate (DER), or null when it presented none. */
  readonly certificate: Buffer | null;
  /** True when the certificate chains to a trusted CA (false without a certificate). */
  readonly authorized: boolean;
}

/** The TLS server settings a listener may carry (a subset of Node's tls options). */
export interface TlsListenOptions {
  key?: string;
  cert?: string;
  pfx?: Buffer;
  passphrase?: string;
  ca?: string[];
  requestCert: boolean;
  rejectUnauthorized: boolean;
  minVersion?: tls.SecureVersion;
  maxVersion?: tls.SecureVersion;
  /** OpenSSL cipher names; TLS 1.3 suites (TLS_...) may be among them. */
  ciphers?: string;
}

export interface Listener {
  readonly host: string;
  readonly port: number;
  close(): Promise<void>;
  /**
   * A TLS listener's new keys, certificates and trust for connections
   * accepted from now on (Node's setSecureContext); connections already
   * open keep theirs. Absent where the network has no TLS (simulations).
   */
  setTlsContext?(options: TlsListenOptions): void;
}

/** Why Node's TLS would refuse `options` (a key that does not match its certificate, a wrong passphrase), or null. */
export function tlsContextProblem(options: TlsListenOptions): string | null {
  try {
    tls.createSecureContext(secureContextOptions(options));
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

/** The parts of a listener's TLS options that make its secure context (client authentication is the server's). */
function secureContextOptions(options: TlsListenOptions): tls.SecureContextOptions {
  const { requestCert: _requestCert, rejectUnauthorized: _rejectUnauthorized, ...context } = options;
  return context;
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
  /** Serve TLS: connections are handed over once their handshake completed. */
  tls?: TlsListenOptions;
}

/** A TLS client's settings (a subset of Node's tls.connect options). */
export interface TlsConnectOptions {
  ca?: string[];
  cert?: string;
  key?: string;
  /** The name the server's certificate must carry; the host when unset. */
  servername?: string;
  /** false skips verifying the server's certificate (Kafka's empty ssl.endpoint.identification.algorithm is narrower). */
  rejectUnauthorized?: boolean;
  maxVersion?: tls.SecureVersion;
}

export interface ConnectOptions {
  host: string;
  port: number;
  /** Speak TLS: resolves once the handshake completed. */
  tls?: TlsConnectOptions;
}

export interface Network {
  listen(options: ListenOptions, onConnection: (connection: Connection) => void): Promise<Listener>;
  connect(options: ConnectOptions): Promise<Connection>;
}

/** How long a connection closed with end() waits for the peer to close its side before it is destroyed. */
export const CONNECTION_CLOSE_LINGER_MS = 5_000;

class TcpConnection implements Connection {
  readonly tlsPeer: TlsPeer | null;

  constructor(private readonly socket: net.Socket) {
    socket.setNoDelay(true);
    this.tlsPeer = socket instanceof tls.TLSSocket ? tlsPeerOf(socket) : null;
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

  get writeQueueBytes(): number | undefined {
    return (this.socket as unknown as { _handle?: { writeQueueSize?: number } })._handle?.writeQueueSize;
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
    // What the peer still sends is not read. Reading on (into no listener) lets Node see the peer's own close, which
    // ends the socket: a paused socket never would. A peer that never closes its side is cut off after the linger.
    this.socket.removeAllListeners('data');
    this.socket.end();
    this.socket.resume();
    const linger = setTimeout(() => this.socket.destroy(), CONNECTION_CLOSE_LINGER_MS);
    this.socket.once('close', () => clearTimeout(linger));
  }

  destroy(): void {
    this.socket.destroy();
  }
}

function tlsPeerOf(socket: tls.TLSSocket): TlsPeer {
  const certificate = socket.getPeerX509Certificate()?.raw ?? null;
  return { certificate, authorized: certificate !== null && socket.authorized };
}

function createServer(options: ListenOptions, onSocket: (socket: net.Socket) => void): net.Server {
  if (options.tls === undefined) return net.createServer(onSocket);
  const server = tls.createServer(options.tls, onSocket);
  // A failed handshake (a plaintext client, an untrusted certificate) costs only that socket, which Node destroys.
  server.on('tlsClientError', () => undefined);
  return server;
}

export const realNetwork: Network = {
  listen(options, onConnection) {
    return new Promise((resolve, reject) => {
      const server = createServer(options, (socket) => {
        socket.on('error', () => undefined);
        onConnection(new TcpConnection(socket));
      });
      server.once('error', reject);
      server.listen(options.port, options.host, () => {
        // Once listening, the server's only errors are failed accepts; unheard, one would end the process.
        server.off('error', reject);
        server.on('error', (error) => options.onAcceptError(error));
        const address = server.address() as net.AddressInfo;
        const tlsServer = options.tls === undefined ? null : (server as tls.Server);
        resolve({
          host: options.host,
          port: address.port,
          close: () => new Promise<void>((done) => server.close(() => done())),
          ...(tlsServer === null ? {} : { setTlsContext: (tlsOptions: TlsListenOptions) => tlsServer.setSecureContext(secureContextOptions(tlsOptions)) }),
        });
      });
    });
  },
  connect(options) {
    return new Promise((resolve, reject) => {
      const socket = options.tls === undefined ? net.connect(options.port, options.host) : tls.connect({ ...options.tls, port: options.port, host: options.host });
      socket.once('error', reject);
      socket.once(options.tls === undefined ? 'connect' : 'secureConnect', () => {
        socket.off('error', reject);
        resolve(new TcpConnection(socket));
      });
    });
  },
};

/** Whether `text` is an IPv4 or IPv6 address, by syntax only (no lookup): Node's parser, kept behind the io seam. */
export function isIpAddress(text: string): boolean {
  return net.isIP(text) !== 0;
}
