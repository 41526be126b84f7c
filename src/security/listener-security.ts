/**
 * How each listener secures its connections, from its security protocol
 * (listeners.ts): PLAINTEXT nothing, SSL a TLS server whose client
 * certificate names the principal, SASL_PLAINTEXT a SASL exchange that
 * names it, SASL_SSL both TLS and SASL (the principal from SASL).
 */
import type { Connection, TlsListenOptions } from '../io/net.js';
import type { FileSystem } from '../io/fs.js';
import type { BrokerConfig } from '../common/config.js';
import { sslListenerSettings } from './ssl-config.js';
import { sslAuthentication } from './ssl-principal.js';
import { saslListenerSettings, type SaslCredentialSources, type SaslListenerSettings } from './sasl/config.js';

/** The principal of a connection that did not authenticate. */
export const ANONYMOUS_PRINCIPAL = 'User:ANONYMOUS';

export interface ListenerSecurity {
  /** Serve TLS (SSL and SASL_SSL listeners). */
  tls?: TlsListenOptions;
  /** The principal a connection's transport establishes (its client certificate), or why it is refused. */
  transportPrincipal?(connection: Connection): { principal: string } | { refused: string };
  /** SASL_PLAINTEXT and SASL_SSL: the mechanisms and credentials a connection authenticates with first. */
  sasl?: SaslListenerSettings;
}

/** Loads what a listener's protocol needs (keystores, ...); throws ConfigError when its settings are wrong. */
export async function listenerSecurity(
  config: BrokerConfig,
  listener: { name: string; securityProtocol: string },
  node: { fs: FileSystem; credentials: SaslCredentialSources },
): Promise<ListenerSecurity> {
  const { fs } = node;
  const sasl = listener.securityProtocol.startsWith('SASL_') ? { sasl: await saslListenerSettings(config, listener, node.credentials, fs) } : {};
  if (listener.securityProtocol !== 'SSL' && listener.securityProtocol !== 'SASL_SSL') return sasl;
  const ssl = await sslListenerSettings(config, listener, fs);
  if (listener.securityProtocol === 'SASL_SSL') return { tls: ssl.tls, ...sasl };
  return {
    tls: ssl.tls,
    transportPrincipal: (connection) => sslAuthentication(connection.tlsPeer ?? { certificate: null, authorized: false }, ssl),
  };
}
