/**
 * Dynamic keystore and truststore updates of this broker's TLS listeners,
 * as Kafka's DynamicBrokerConfig and SslFactory do them:
 *
 * - validate: before an AlterConfigs or IncrementalAlterConfigs on a
 *   BROKER resource is written, the broker checks the store settings it
 *   changes (ConfigAdminManager on the target broker). They must carry the
 *   listener prefix, name this broker (not the cluster default), and the
 *   new stores must be accepted by ssl-reload.ts; each refusal is
 *   INVALID_REQUEST with Kafka's message.
 * - onMetadataUpdate: once this broker's dynamic configs change the
 *   effective store settings of a listener (and at start, from the metadata
 *   log), the listener serves the new stores to new connections; open
 *   connections keep theirs. Settings refused then (written by another
 *   broker's forwarded request, which this broker did not validate) are
 *   logged and the listener keeps its stores, as Kafka logs and keeps them.
 */
import type { BrokerConfig } from '../common/config.js';
import type { Logger } from '../common/logger.js';
import type { FileSystem } from '../io/fs.js';
import type { TlsListenOptions } from '../io/net.js';
import { ErrorCode } from '../protocol/errors.js';
import type { MetadataImage, MetadataPublisher } from '../metadata/image.js';
import { listenerStoreConfig, reconfiguredTls, SSL_STORE_CONFIGS, withDynamicConfigs } from '../security/ssl-reload.js';

/** What the reloader reads from and changes on the socket server. */
export interface TlsListeners {
  listenerTls(name: string): TlsListenOptions | undefined;
  setListenerTls(name: string, tls: TlsListenOptions): void;
}

export type ConfigRefusal = { errorCode: number; message: string };

/** Java's Set.toString of names: `[a, b]`. */
const javaSet = (names: readonly string[]) => `[${names.join(', ')}]`;

export class ListenerTlsReloader implements MetadataPublisher {
  readonly name = 'ListenerTlsReloader';
  /** Per listener, the store settings it serves (their text, to see a change). */
  private readonly applied = new Map<string, string>();

  constructor(
    private readonly node: { nodeId: number; config: BrokerConfig; fs: FileSystem; log: Logger },
    private readonly listeners: { specs: readonly { name: string; securityProtocol: string }[]; server: TlsListeners },
  ) {}

  /**
   * Kafka's broker-side check of a BROKER resource's new dynamic configs
   * (`dynamic`: all of them once altered), for the `changed` names.
   */
  async validate(resourceName: string, dynamic: ReadonlyMap<string, string>, changed: readonly string[]): Promise<ConfigRefusal | null> {
    const refused = (message: string): ConfigRefusal => ({ errorCode: ErrorCode.INVALID_REQUEST, message });
    const unprefixed = changed.filter((name) => SSL_STORE_CONFIGS.has(name));
    if (unprefixed.length > 0) return refused(`These security configs can be dynamically updated only per-listener using the listener prefix: ${javaSet(unprefixed)}`);
    const storeConfigs = changed.filter((name) => listenerStoreConfig(name) !== null);
    if (storeConfigs.length === 0) return null;
    if (resourceName === '') return refused(`Cannot update these configs at default cluster level, broker id must be specified: ${javaSet(storeConfigs)}`);
    if (!/^-?\d+$/.test(resourceName)) return refused(`Node id must be an integer, but it is: ${resourceName}`);
    if (Number(resourceName) !== this.node.nodeId) return refused(`Unexpected broker id, expected ${this.node.nodeId}, but received ${resourceName}`);
    const listenerNames = new Set(storeConfigs.map((name) => listenerStoreConfig(name)!));
    const config = withDynamicConfigs(this.node.config, dynamic);
    for (const spec of this.tlsListeners().filter((l) => listenerNames.has(l.name.toLowerCase()))) {
      const result = await reconfiguredTls(config, spec, this.listeners.server.listenerTls(spec.name)!, this.node.fs);
      if ('refused' in result) return refused(result.refused);
    }
    return null;
  }

  async onMetadataUpdate(_delta: unknown, image: MetadataImage): Promise<void> {
    const dynamic = image.brokerConfigs.get(String(this.node.nodeId)) ?? new Map<string, string>();
    for (const spec of this.tlsListeners()) {
      const settings = storeSettingsText(dynamic, spec.name);
      if ((this.applied.get(spec.name) ?? '') === settings) continue;
      this.applied.set(spec.name, settings);
      const result = await reconfiguredTls(withDynamicConfigs(this.node.config, dynamic), spec, this.listeners.server.listenerTls(spec.name)!, this.node.fs);
      if ('refused' in result) {
        this.node.log.error(`listener ${spec.name} keeps its keystore and truststore: the dynamic ones were refused: ${result.refused}`);
        continue;
      }
      this.listeners.server.setListenerTls(spec.name, result.tls);
      this.node.log.info(`listener ${spec.name} serves its new keystore and truststore to new connections`);
    }
  }

  private tlsListeners() {
    return this.listeners.specs.filter((spec) => spec.securityProtocol === 'SSL' || spec.securityProtocol === 'SASL_SSL');
  }
}

/** A listener's dynamic store settings as one text ('' when it has none). */
function storeSettingsText(dynamic: ReadonlyMap<string, string>, listenerName: string): string {
  const entries = [...dynamic].filter(([name]) => listenerStoreConfig(name) === listenerName.toLowerCase()).sort(([a], [b]) => (a < b ? -1 : 1));
  return entries.length === 0 ? '' : JSON.stringify(entries);
}
