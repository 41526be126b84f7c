/**
 * Kafka's ConnectionQuotas: how many connections a node holds, in total, per
 * listener and per client address.
 *
 * - `max.connections.per.ip` (with `max.connections.per.ip.overrides`, a
 *   list of `address:count`): a connection from an address that already has
 *   its maximum is closed as soon as it is accepted.
 * - `max.connections` (node-wide) and `listener.name.<name>.max.connections`
 *   (one listener): when either is reached the listener stops accepting;
 *   new connections wait, unanswered, until a connection closes. Spool
 *   accepts them and holds them unread, up to `socket.listen.backlog.size`
 *   per listener (the kernel's backlog, where Kafka leaves them), and closes
 *   those beyond that.
 * - The inter-broker listener, when it is not the only listener, is exempt
 *   from the node-wide limit; a connection it brings over that limit makes
 *   the node close the least recently active connection of another listener.
 *
 * As in Kafka, where a controller's listeners have a socket server of their
 * own, the controller listeners and the others are counted apart, each
 * against the same limits.
 */
import type { Connection } from '../io/env.js';
import { ConfigError, type BrokerConfig } from '../common/config.js';
import type { Logger } from '../common/logger.js';
import { interBrokerListenerName } from './listeners.js';

export interface ConnectionQuotaConfig {
  /** max.connections */
  maxConnections: number;
  /** max.connections.per.ip */
  maxConnectionsPerIp: number;
  /** max.connections.per.ip.overrides, by normalized address. */
  maxConnectionsPerIpOverrides: ReadonlyMap<string, number>;
  /** listener.name.<name>.max.connections, by upper-case listener name. */
  listenerMaxConnections: ReadonlyMap<string, number>;
  interBrokerListenerName: string;
  controllerListenerNames: ReadonlySet<string>;
  /** socket.listen.backlog.size: connections a full listener holds waiting. */
  listenBacklogSize: number;
}

const INT_MAX = 2147483647;

/** No limits: Kafka's defaults. */
export const UNLIMITED_CONNECTIONS: ConnectionQuotaConfig = {
  maxConnections: INT_MAX,
  maxConnectionsPerIp: INT_MAX,
  maxConnectionsPerIpOverrides: new Map(),
  listenerMaxConnections: new Map(),
  interBrokerListenerName: 'PLAINTEXT',
  controllerListenerNames: new Set(['CONTROLLER']),
  listenBacklogSize: 50,
};

export function connectionQuotaConfigFrom(config: BrokerConfig): ConnectionQuotaConfig {
  const overrides = parseOverrides(config.string('max.connections.per.ip.overrides') ?? '');
  const maxConnectionsPerIp = config.int('max.connections.per.ip');
  if (maxConnectionsPerIp === 0 && overrides.size === 0) {
    throw new ConfigError('max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set.');
  }
  const listenerMaxConnections = new Map<string, number>();
  for (const [name, raw] of config.explicit) {
    const match = /^listener\.name\.([^.]+)\.max\.connections$/.exec(name);
    if (match === null) continue;
    const value = Number(raw.trim());
    if (!Number.isInteger(value) || value < 0 || value > INT_MAX) throw new ConfigError(`Invalid value ${raw} for configuration ${name}: must be an int of at least 0`);
    listenerMaxConnections.set(match[1]!.toUpperCase(), value);
  }
  return {
    maxConnections: config.int('max.connections'),
    maxConnectionsPerIp,
    maxConnectionsPerIpOverrides: overrides,
    listenerMaxConnections,
    interBrokerListenerName: interBrokerListenerName(config),
    controllerListenerNames: new Set(config.list('controller.listener.names').map((name) => name.toUpperCase())),
    listenBacklogSize: config.int('socket.listen.backlog.size'),
  };
}

/** `host:count,host:count` as Kafka's Csv.parseCsvMap reads it (the count after the last colon, so IPv6 works). */
function parseOverrides(text: string): Map<string, number> {
  const out = new Map<string, number>();
  if (text.trim() === '') return out;
  for (const entry of text.split(/\s*,\s*/)) {
    const colon = entry.lastIndexOf(':');
    const host = entry.slice(0, colon).trim();
    const count = Number(entry.slice(colon + 1).trim());
    if (colon < 0 || host === '' || !Number.isInteger(count)) {
      throw new ConfigError(`Error parsing configuration property 'max.connections.per.ip.overrides': invalid entry '${entry}'`);
    }
    out.set(normalizeAddress(host), count);
  }
  return out;
}

/** An IPv4 client on a dual-stack socket shows as `::ffff:a.b.c.d`; Kafka (Java) sees it as `a.b.c.d`. */
export function normalizeAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped === null ? address.toLowerCase() : mapped[1]!;
}

/** One socket server's counts: the controller listeners', or every other listener's. */
export class ConnectionQuotas {
  private total = 0;
  private readonly byListener = new Map<string, number>();
  private readonly byAddress = new Map<string, number>();

  constructor(private readonly config: ConnectionQuotaConfig) {}

  addListener(listener: string): void {
    this.byListener.set(listener, 0);
  }

  /** Whether `listener` may accept now (Kafka's connectionSlotAvailable). */
  slotAvailable(listener: string): boolean {
    if ((this.byListener.get(listener) ?? 0) >= (this.config.listenerMaxConnections.get(listener) ?? INT_MAX)) return false;
    return this.isProtected(listener) || this.total < this.config.maxConnections;
  }

  /** Counts an accepted connection; false (and nothing counted) when its address already has its maximum. */
  tryAdd(listener: string, address: string): boolean {
    const normalized = normalizeAddress(address);
    const count = this.byAddress.get(normalized) ?? 0;
    if (count >= this.maxForAddress(normalized)) return false;
    this.byAddress.set(normalized, count + 1);
    this.byListener.set(listener, (this.byListener.get(listener) ?? 0) + 1);
    this.total++;
    return true;
  }

  remove(listener: string, address: string): void {
    const normalized = normalizeAddress(address);
    const count = this.byAddress.get(normalized) ?? 0;
    if (count <= 1) this.byAddress.delete(normalized);
    else this.byAddress.set(normalized, count - 1);
    this.byListener.set(listener, (this.byListener.get(listener) ?? 1) - 1);
    this.total--;
  }

  maxForAddress(address: string): number {
    return this.config.maxConnectionsPerIpOverrides.get(normalizeAddress(address)) ?? this.config.maxConnectionsPerIp;
  }

  /** Connections over max.connections (only the exempt inter-broker listener can bring the count there). */
  excess(): number {
    return Math.max(0, this.total - this.config.maxConnections);
  }

  /** The inter-broker listener is exempt from max.connections when the node has other listeners. */
  isProtected(listener: string): boolean {
    return listener === this.config.interBrokerListenerName && this.byListener.size > 1;
  }
}

export interface AdmittedConnection {
  readonly listenerName: string;
  /** When the connection last received bytes (monotonic ms): the least recent goes first when the node is over its limit. */
  readonly lastActiveMs: number;
  close(reason: string): void;
}

/**
 * Kafka's acceptors in front of the socket server: every accepted connection
 * passes `offer`, and `open` turns those admitted into served connections.
 */
export class ConnectionGate {
  private readonly dataPlane: ConnectionQuotas;
  private readonly controllerPlane: ConnectionQuotas;
  private readonly waiting = new Map<string, Connection[]>();

  constructor(
    private readonly config: ConnectionQuotaConfig,
    private readonly log: Logger,
    private readonly open: (listener: string, connection: Connection) => void,
    private readonly admitted: () => Iterable<AdmittedConnection>,
  ) {
    this.dataPlane = new ConnectionQuotas(config);
    this.controllerPlane = new ConnectionQuotas(config);
  }

  addListener(listener: string): void {
    this.quotasOf(listener).addListener(listener);
    this.waiting.set(listener, []);
  }

  offer(listener: string, connection: Connection): void {
    const queue = this.waiting.get(listener)!;
    if (queue.length === 0 && this.quotasOf(listener).slotAvailable(listener)) {
      this.admit(listener, connection);
      return;
    }
    if (queue.length >= this.config.listenBacklogSize) {
      this.log.info(`Listener ${listener} is full and ${queue.length} connections wait; closing the connection from ${connection.remoteAddress}.`);
      connection.destroy();
      return;
    }
    connection.pause();
    queue.push(connection);
    connection.onClose(() => {
      const at = queue.indexOf(connection);
      if (at >= 0) queue.splice(at, 1);
    });
  }

  /** At shutdown: connections still waiting for a slot are closed unserved. */
  closeWaiting(): void {
    for (const queue of this.waiting.values()) {
      for (const connection of queue.splice(0)) connection.destroy();
    }
  }

  private release(listener: string, address: string): void {
    this.quotasOf(listener).remove(listener, address);
    for (const [name, queue] of this.waiting) {
      while (queue.length > 0 && this.quotasOf(name).slotAvailable(name)) this.admit(name, queue.shift()!);
    }
  }

  private admit(listener: string, connection: Connection): void {
    const quotas = this.quotasOf(listener);
    // Read once: a closed socket no longer knows its peer, and the count must come off the same address.
    const address = connection.remoteAddress;
    if (!quotas.tryAdd(listener, address)) {
      this.log.info(`Rejected connection from ${address}, address already has the configured maximum of ${quotas.maxForAddress(address)} connections.`);
      connection.destroy();
      return;
    }
    connection.onClose(() => this.release(listener, address));
    this.open(listener, connection);
    connection.resume();
    this.closeExcessConnections(quotas);
  }

  /** Connections the inter-broker listener brought over max.connections cost the least recently active of the others. */
  private closeExcessConnections(quotas: ConnectionQuotas): void {
    let excess = quotas.excess();
    if (excess === 0) return;
    const candidates = [...this.admitted()]
      .filter((connection) => this.quotasOf(connection.listenerName) === quotas && !quotas.isProtected(connection.listenerName))
      .sort((a, b) => a.lastActiveMs - b.lastActiveMs);
    for (const connection of candidates) {
      if (excess-- === 0) break;
      connection.close('max.connections exceeded by the inter-broker listener');
    }
  }

  private quotasOf(listener: string): ConnectionQuotas {
    return this.config.controllerListenerNames.has(listener) ? this.controllerPlane : this.dataPlane;
  }
}
