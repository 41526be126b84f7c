/**
 * The real network with the broker's side of each connection watched: the
 * most response bytes ever left unsent, read pauses, and accepted connections.
 */
import { realNetwork, type Connection, type Listener, type ListenOptions, type Network } from '../../src/io/net.js';

export class WatchedNetwork implements Network {
  pendingWriteBytesPeak = 0;
  accepted = 0;
  private pauseWaiters: (() => void)[] = [];
  private acceptWaiters: { count: number; resolve: () => void }[] = [];

  listen(options: ListenOptions, onConnection: (connection: Connection) => void): Promise<Listener> {
    return realNetwork.listen(options, (connection) => {
      onConnection(this.watch(connection));
      this.accepted++;
      for (const waiter of this.acceptWaiters.filter((w) => w.count <= this.accepted)) waiter.resolve();
      this.acceptWaiters = this.acceptWaiters.filter((w) => w.count > this.accepted);
    });
  }

  /** Resolves once the broker has been handed `count` connections in all (and has offered each to its gate). */
  acceptedCount(count: number): Promise<void> {
    if (this.accepted >= count) return Promise.resolve();
    return new Promise((resolve) => this.acceptWaiters.push({ count, resolve }));
  }

  connect(options: { host: string; port: number }): Promise<Connection> {
    return realNetwork.connect(options);
  }

  /** Resolves the next time the broker stops reading a connection. */
  nextPause(): Promise<void> {
    return new Promise((resolve) => this.pauseWaiters.push(resolve));
  }

  private watch(connection: Connection): Connection {
    const network = this;
    return Object.assign(Object.create(connection) as Connection, {
      write(chunks: readonly Uint8Array[]): boolean {
        const full = connection.write(chunks);
        network.pendingWriteBytesPeak = Math.max(network.pendingWriteBytesPeak, connection.pendingWriteBytes);
        return full;
      },
      pause(): void {
        connection.pause();
        for (const waiter of network.pauseWaiters.splice(0)) waiter();
      },
    });
  }
}

