/**
 * A network that can be partitioned, on loopback: one cut-able TCP proxy in
 * front of every listener of every node (its client/inter-broker listener
 * and its controller listener). Nodes advertise the proxies' ports and name
 * them in controller.quorum.voters, so every byte between nodes, and
 * between clients and nodes, crosses a proxy.
 *
 * A proxy knows which node a connection comes from: the connecting
 * socket's inode is looked up in /proc/net/tcp{,6} by its port pair, and
 * found among the node processes' file descriptors (/proc/PID/fd); any other
 * process is a client. The lookup runs when a partition begins (a node's
 * pid is known only once it is ready, after its first connections) and for
 * each connection opened during one. So `isolate(node)` cuts the node off in both
 * directions, from the other nodes and from clients, while its own
 * connections to itself (its broker to its controller) keep working, as on
 * a machine whose network cable was pulled.
 *
 * A cut is a black hole, not a reset: bytes stop flowing (both sockets are
 * paused, the kernel buffers hold what was sent), new connections are
 * accepted but not forwarded. Peers see requests time out, as across a real
 * partition. When the partition heals, the paused bytes flow on, as TCP
 * would retransmit them; connections a peer gave up on meanwhile close.
 *
 * Test code, not product code: node:net and node:fs directly. Linux only.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { readFile, readdir, readlink } from 'node:fs/promises';

export type NodeId = number;
/** Where a connection comes from: a node, or any other process. */
export type Source = NodeId | 'client';

interface ProxiedConnection {
  source: Source;
  target: NodeId;
  downstream: Socket;
  upstream: Socket | null;
  /** The upstream port, once this connection may flow. */
  connectTo: number;
  flowing: boolean;
}

export interface ProxyEndpoint {
  /** The node behind the proxy. */
  node: NodeId;
  /** The port the proxy listens on (what the node advertises). */
  port: number;
}

export class FaultNetwork {
  private readonly servers: Server[] = [];
  private readonly connections = new Set<ProxiedConnection>();
  private readonly isolated = new Set<NodeId>();

  /** `pids()` names each node's current process (it changes when a node restarts). */
  constructor(private readonly pids: () => ReadonlyMap<NodeId, number>) {}

  /** A proxy on a free loopback port forwarding to `targetPort` of `node`. */
  async proxy(node: NodeId, targetPort: () => number): Promise<ProxyEndpoint> {
    const server = createServer({ pauseOnConnect: true }, (socket) => void this.accept(node, targetPort(), socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.servers.push(server);
    const address = server.address();
    if (typeof address !== 'object' || address === null) throw new Error('proxy without an address');
    return { node, port: address.port };
  }

  /** Cuts `node` off from every other node and every client (both directions). */
  async isolate(node: NodeId): Promise<void> {
    this.isolated.add(node);
    // Connections were classified when they opened, maybe before their node's pid was known: again now.
    await Promise.all([...this.connections].map(async (connection) => {
      if (connection.source === 'client') connection.source = await sourceOf(connection.downstream, this.pids()).catch((): Source => 'client');
    }));
    for (const connection of this.connections) if (!this.allowed(connection)) this.pause(connection);
  }

  /** Heals every partition: paused connections flow on, held ones are forwarded. */
  heal(): void {
    this.isolated.clear();
    for (const connection of this.connections) this.flow(connection);
  }

  /** How many connections each source has open through the proxies (for failure messages). */
  describe(): string {
    const bySource = new Map<string, number>();
    for (const connection of this.connections) {
      const key = `${connection.source}->${connection.target}${connection.flowing ? '' : ' (held)'}`;
      bySource.set(key, (bySource.get(key) ?? 0) + 1);
    }
    return [...bySource].map(([key, count]) => `${key}: ${count}`).join(', ');
  }

  async close(): Promise<void> {
    for (const connection of this.connections) this.drop(connection);
    await Promise.all(this.servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  }

  private allowed(connection: ProxiedConnection): boolean {
    if (connection.source === connection.target) return true;
    const sourceIsolated = connection.source !== 'client' && this.isolated.has(connection.source);
    return !sourceIsolated && !this.isolated.has(connection.target);
  }

  private async accept(target: NodeId, connectTo: number, downstream: Socket): Promise<void> {
    const connection: ProxiedConnection = { source: 'client', target, downstream, upstream: null, connectTo, flowing: false };
    this.connections.add(connection);
    downstream.on('error', () => this.drop(connection));
    downstream.on('close', () => this.drop(connection));
    // Classified now only under a partition; otherwise when one begins (isolate).
    if (this.isolated.size > 0) connection.source = await sourceOf(downstream, this.pids()).catch((): Source => 'client');
    if (!this.connections.has(connection)) return;
    if (this.allowed(connection)) this.flow(connection);
  }

  private flow(connection: ProxiedConnection): void {
    if (connection.flowing || !this.connections.has(connection)) return;
    connection.flowing = true;
    if (connection.upstream === null) {
      const upstream = createConnection({ host: '127.0.0.1', port: connection.connectTo });
      connection.upstream = upstream;
      upstream.on('error', () => this.drop(connection));
      upstream.on('close', () => this.drop(connection));
    }
    connection.downstream.pipe(connection.upstream);
    connection.upstream.pipe(connection.downstream);
  }

  /** Unpiped and paused, each side stops reading: the kernel holds the bytes until flow() pipes them again. */
  private pause(connection: ProxiedConnection): void {
    if (!connection.flowing) return;
    connection.flowing = false;
    if (connection.upstream === null) return;
    connection.downstream.unpipe(connection.upstream);
    connection.upstream.unpipe(connection.downstream);
    connection.downstream.pause();
    connection.upstream.pause();
  }

  private drop(connection: ProxiedConnection): void {
    if (!this.connections.delete(connection)) return;
    connection.downstream.destroy();
    connection.upstream?.destroy();
  }
}

/** The node whose process holds the other end of `socket` (a connection accepted on loopback), else 'client'. */
async function sourceOf(socket: Socket, pids: ReadonlyMap<NodeId, number>): Promise<Source> {
  const inode = await peerInode(socket.remotePort!, socket.localPort!);
  if (inode === null) return 'client';
  const link = `socket:[${inode}]`;
  for (const [node, pid] of pids) {
    const fds = await readdir(`/proc/${pid}/fd`).catch((): string[] => []);
    for (const fd of fds) {
      if ((await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')) === link) return node;
    }
  }
  return 'client';
}

/** The inode of the socket bound to local port `port` and connected to remote port `peerPort`, from /proc/net/tcp and tcp6. */
async function peerInode(port: number, peerPort: number): Promise<string | null> {
  const hex = (value: number): string => value.toString(16).toUpperCase().padStart(4, '0');
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const table = await readFile(file, 'utf8').catch(() => '');
    for (const line of table.split('\n').slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      if (fields[1]!.endsWith(`:${hex(port)}`) && fields[2]!.endsWith(`:${hex(peerPort)}`)) return fields[9]!;
    }
  }
  return null;
}
