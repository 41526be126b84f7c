/**
 * The principal of a TLS connection, as Kafka's DefaultKafkaPrincipalBuilder
 * builds it: `User:` and the client certificate's subject in RFC 2253 form
 * (Java's X500Principal.getName(): most specific attribute first,
 * `CN=alice,OU=eng,O=Acme,C=US`), passed through ssl.principal.mapping.rules.
 * Without a client certificate the principal is `User:ANONYMOUS`.
 */
import { X509Certificate } from 'node:crypto';
import type { TlsPeer } from '../io/net.js';
import type { SslClientAuth } from './ssl-config.js';
import { ANONYMOUS_PRINCIPAL } from './listener-security.js';
import { NoMatchingRule, type SslPrincipalMapper } from './ssl-principal-mapper.js';

/**
 * The attribute keywords X500Principal's RFC 2253 form spells by name
 * (Node spells them the same way, `street` aside). Other attributes keep
 * OpenSSL's short names, where Java would print a dotted OID and hex value.
 */
const RFC2253_KEYWORDS: Readonly<Record<string, string>> = { street: 'STREET' };

/** A certificate's subject in RFC 2253 order and form. */
export function distinguishedName(certificate: Buffer): string {
  // Node lists the subject's attributes one a line in certificate order (least specific first), escaped as RFC 2253 asks.
  const attributes = new X509Certificate(certificate).subject.split('\n').filter((line) => line !== '');
  return attributes
    .reverse()
    .map((attribute) => {
      const equals = attribute.indexOf('=');
      const type = attribute.slice(0, equals);
      return `${RFC2253_KEYWORDS[type] ?? type}${attribute.slice(equals)}`;
    })
    .join(',');
}

export type SslAuthentication = { principal: string } | { refused: string };

/** The principal for a completed handshake, or why the connection is refused. */
export function sslAuthentication(peer: TlsPeer, settings: { clientAuth: SslClientAuth; principalMapper: SslPrincipalMapper }): SslAuthentication {
  if (peer.certificate === null || settings.clientAuth === 'none') return { principal: ANONYMOUS_PRINCIPAL };
  // With ssl.client.auth=requested Node lets an untrusted certificate through; the JVM fails such a handshake.
  if (!peer.authorized) return { refused: 'the client certificate is not trusted' };
  const dn = distinguishedName(peer.certificate);
  try {
    return { principal: `User:${settings.principalMapper.nameOf(dn)}` };
  } catch (error) {
    if (error instanceof NoMatchingRule) return { refused: error.message };
    throw error;
  }
}
