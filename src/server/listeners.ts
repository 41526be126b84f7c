/**
 * Which security protocol each listener speaks, resolved as Kafka resolves
 * it (KafkaConfig.effectiveListenerSecurityProtocolMap): the listener's name
 * looked up in listener.security.protocol.map. When that map is left at its
 * default, the controller listeners missing from it speak PLAINTEXT, unless
 * some listener or controller listener is named SSL or SASL_*. A listener
 * with no protocol stops the start, with Kafka's message.
 * What each protocol needs (keystores, SASL mechanisms) is src/security's.
 */
import { BrokerConfig, ConfigError, parseListeners, type ListenerSpec } from '../common/config.js';
import type { MetadataImage } from '../metadata/image.js';

/** Kafka's SecurityProtocol names and ids (the ids travel in broker and controller registrations). */
export const SECURITY_PROTOCOL_IDS = { PLAINTEXT: 0, SSL: 1, SASL_PLAINTEXT: 2, SASL_SSL: 3 } as const;
export type SecurityProtocol = keyof typeof SECURITY_PROTOCOL_IDS;

const MAP_CONFIG = 'listener.security.protocol.map';

export interface BrokerListener extends ListenerSpec {
  securityProtocol: SecurityProtocol;
}

function securityProtocolNamed(name: string): SecurityProtocol | null {
  const upper = name.toUpperCase();
  return Object.hasOwn(SECURITY_PROTOCOL_IDS, upper) ? (upper as SecurityProtocol) : null;
}

/** listener.security.protocol.map as Kafka reads it: `NAME:PROTOCOL` entries, names normalised to upper case. */
function configuredProtocols(config: BrokerConfig): Map<string, SecurityProtocol> {
  const protocols = new Map<string, SecurityProtocol>();
  for (const entry of config.list(MAP_CONFIG)) {
    const colon = entry.lastIndexOf(':');
    if (colon < 0) throw new ConfigError(`Error parsing configuration property '${MAP_CONFIG}': ${entry} is not of the form NAME:PROTOCOL`);
    const protocolName = entry.slice(colon + 1).trim();
    const protocol = securityProtocolNamed(protocolName);
    if (protocol === null) throw new ConfigError(`Invalid security protocol \`${protocolName}\` defined in ${MAP_CONFIG}`);
    protocols.set(entry.slice(0, colon).trim().toUpperCase(), protocol);
  }
  return protocols;
}

/** Kafka's effective listener -> security protocol map. */
export function listenerSecurityProtocols(config: BrokerConfig): Map<string, SecurityProtocol> {
  const protocols = configuredProtocols(config);
  if (config.isExplicit(MAP_CONFIG)) return protocols;
  const controllerNames = config.list('controller.listener.names').map((name) => name.toUpperCase());
  const names = [...controllerNames, ...parseListeners(config.list('listeners')).map((l) => l.name)];
  if (names.some((name) => name !== 'PLAINTEXT' && securityProtocolNamed(name) !== null)) return protocols;
  for (const name of controllerNames) if (!protocols.has(name)) protocols.set(name, 'PLAINTEXT');
  return protocols;
}

/** The `listeners` entries with their security protocols. Throws ConfigError for a listener without a protocol, as Kafka does. */
export function brokerListeners(config: BrokerConfig): BrokerListener[] {
  const protocols = listenerSecurityProtocols(config);
  return parseListeners(config.list('listeners')).map((spec) => {
    const securityProtocol = protocols.get(spec.name);
    if (securityProtocol === undefined) {
      throw new ConfigError(`Error creating broker listeners from '${config.string('listeners')}': No security protocol defined for listener ${spec.name}`);
    }
    return { ...spec, securityProtocol };
  });
}

/**
 * The listener brokers talk to each other on: inter.broker.listener.name,
 * else the listener named after security.inter.broker.protocol (Kafka's
 * rule; setting both is an error).
 */
export function interBrokerListenerName(config: BrokerConfig): string {
  const named = config.string('inter.broker.listener.name');
  if (named !== null && config.isExplicit('security.inter.broker.protocol')) {
    throw new ConfigError('Only one of inter.broker.listener.name and security.inter.broker.protocol should be set.');
  }
  return (named ?? config.string('security.inter.broker.protocol')!).toUpperCase();
}

/**
 * Where another broker is reached from this one: its endpoint on the
 * inter-broker listener as the metadata image names it (its first listener
 * when the name is unset or it has none by that name), or null.
 */
export function interBrokerEndpoint(image: MetadataImage, brokerId: number, listenerName: string | undefined): { host: string; port: number } | null {
  const listeners = image.brokers.get(brokerId)?.listeners ?? [];
  const endpoint = (listenerName === undefined ? undefined : listeners.find((listener) => listener.name === listenerName)) ?? listeners[0];
  return endpoint === undefined ? null : { host: endpoint.host, port: endpoint.port };
}
