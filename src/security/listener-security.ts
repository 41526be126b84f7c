/**
 * How each listener secures its connections, from its security protocol
 * (listeners.ts): PLAINTEXT nothing, SSL a TLS server whose client
 * certificate names the principal.
 */
import type { Connection, TlsListenOptions } from '../io/net.js';
import type { FileSystem } from '../io/fs.js';
import type { BrokerConfig } from '../common/config.js';
import { sslListenerSettings } from './ssl-config.js';
import { sslAuthentication } from './ssl-principal.js';

/** The principal of a connection that did not authenticate. */
export const ANONYMOUS_PRINCIPAL = 'User:ANONYMOUS';

export interface ListenerSecurity {
  /** Serve TLS (SSL and SASL_SSL listeners). */
  tls?: TlsListenOptions;
  /** The principal a connection's transport establishes (its client certificate), or why it is refused. */
  transportPrincipal?(connection: Connection): { principal: string } | { refused: string };
}

/** Loads what a listener's protocol needs (keystores, ...); throws ConfigError when its settings are wrong. */
export async function listenerSecurity(
  config: BrokerConfig,
  listener: { name: string; securityProtocol: string },
  fs: FileSystem,
): Promise<ListenerSecurity> {
  if (listener.securityProtocol !== 'SSL' && listener.securityProtocol !== 'SASL_SSL') return {};
  const ssl = await sslListenerSettings(config, listener, fs);
  if (listener.securityProtocol === 'SASL_SSL') return { tls: ssl.tls };
  return {
    tls: ssl.tls,
    transportPrincipal: (connection) => sslAuthentication(connection.tlsPeer ?? { certificate: null, authorized: false }, ssl),
  };
}
