/**
 * Kafka's dynamic keystore update (SslFactory.validateReconfiguration): a
 * TLS listener's keystore and truststore settings may change without a
 * restart, per broker and with the listener prefix
 * (`listener.name.<listener>.ssl.keystore.location`, the PEM forms
 * `ssl.keystore.certificate.chain` / `ssl.keystore.key`,
 * `ssl.truststore.*`). The new stores must load, their key must match
 * their certificate, and the new certificate must keep the old one's
 * subject (`ssl.allow.dn.changes`) and every subject alternative name of
 * the old one (`ssl.allow.san.changes`); a listener without a truststore
 * cannot gain one. Refusals carry the text Kafka's broker answers
 * (INVALID_REQUEST), its ConfigException wrapped twice.
 */
import { X509Certificate } from 'node:crypto';
import forge from 'node-forge';
import { BrokerConfig, ConfigError } from '../common/config.js';
import type { FileSystem } from '../io/fs.js';
import { tlsContextProblem, type TlsListenOptions } from '../io/net.js';
import { listenerSetting, sslListenerSettings } from './ssl-config.js';

/** Kafka's SslConfigs.RECONFIGURABLE_CONFIGS: the settings of a listener's stores. */
export const SSL_STORE_CONFIGS: ReadonlySet<string> = new Set([
  'ssl.keystore.type',
  'ssl.keystore.location',
  'ssl.keystore.password',
  'ssl.key.password',
  'ssl.keystore.certificate.chain',
  'ssl.keystore.key',
  'ssl.truststore.type',
  'ssl.truststore.location',
  'ssl.truststore.password',
  'ssl.truststore.certificates',
]);

const LISTENER_CONFIG = /^listener\.name\.([^.]+)\.(.+)$/;

/** The listener (lower case, as the prefix spells it) whose store `name` sets, or null. */
export function listenerStoreConfig(name: string): string | null {
  const match = LISTENER_CONFIG.exec(name);
  return match !== null && SSL_STORE_CONFIGS.has(match[2]!) ? match[1]! : null;
}

/** The alias Kafka gives a PEM keystore's one entry (DefaultSslEngineFactory's PemStore). */
const PEM_ALIAS = 'kafka';

interface KeystoreEntry {
  alias: string;
  certificate: X509Certificate;
}

/** `config` with `dynamic` (a broker's dynamic configs) over its explicit settings, as Kafka's current config is built. */
export function withDynamicConfigs(config: BrokerConfig, dynamic: ReadonlyMap<string, string>): BrokerConfig {
  return new BrokerConfig(new Map([...config.explicit, ...dynamic]));
}

/**
 * The listener's TLS options under `config`, or Kafka's refusal when they
 * may not replace `current` (the options it serves now).
 */
export async function reconfiguredTls(
  config: BrokerConfig,
  listener: { name: string; securityProtocol: string },
  current: TlsListenOptions,
  fs: FileSystem,
): Promise<{ tls: TlsListenOptions } | { refused: string }> {
  const refused = (reason: string) => ({
    refused: `Invalid value org.apache.kafka.common.config.ConfigException: Validation of dynamic config update of SSLFactory failed: ${reason} for configuration Invalid dynamic configuration`,
  });
  let tls: TlsListenOptions;
  try {
    tls = (await sslListenerSettings(config, listener, fs)).tls;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return refused(`org.apache.kafka.common.KafkaException: ${error.message}`);
  }
  const problem = tlsContextProblem(tls);
  if (problem !== null) return refused(`org.apache.kafka.common.KafkaException: ${problem}`);
  if ((current.ca ?? []).length === 0 && (tls.ca ?? []).length > 0) {
    return refused('org.apache.kafka.common.config.ConfigException: Cannot add SSL truststore to an existing listener for which no truststore was configured.');
  }
  const allowed = (name: string) => (listenerSetting(config, listener.name, name, 'false') ?? 'false').trim().toLowerCase() === 'true';
  const incompatible = keystoreIncompatibility(keystoreEntry(current), keystoreEntry(tls), { allowDnChanges: allowed('ssl.allow.dn.changes'), allowSanChanges: allowed('ssl.allow.san.changes') });
  if (incompatible !== null) return refused(`org.apache.kafka.common.config.ConfigException: ${incompatible}`);
  return { tls };
}

/** Kafka's CertificateEntries.ensureCompatible on the stores' one entry each. */
function keystoreIncompatibility(old: KeystoreEntry, next: KeystoreEntry, options: { allowDnChanges: boolean; allowSanChanges: boolean }): string | null {
  const oldDn = javaDistinguishedName(old.certificate);
  const nextDn = javaDistinguishedName(next.certificate);
  if (!options.allowDnChanges && oldDn.toLowerCase() !== nextDn.toLowerCase()) {
    return `Keystore DistinguishedName does not match:  existing={alias=${old.alias}, DN=${oldDn}}, new={alias=${next.alias}, DN=${nextDn}}`;
  }
  const oldSans = subjectAltNames(old.certificate);
  const nextSans = subjectAltNames(next.certificate);
  if (!options.allowSanChanges && !oldSans.every((san) => nextSans.includes(san))) {
    return `Keystore SubjectAltNames do not match:  existing={alias=${old.alias}, SAN=[${oldSans.join(', ')}]}, new={alias=${next.alias}, SAN=[${nextSans.join(', ')}]}`;
  }
  return null;
}

/** X500Principal.toString(): the subject's attributes most specific first, separated by ", ". */
function javaDistinguishedName(certificate: X509Certificate): string {
  return certificate.subject.split('\n').filter((line) => line !== '').reverse().join(', ');
}

/** The JDK's numbers for GeneralName types (X509Certificate.getSubjectAlternativeNames). */
const GENERAL_NAME_TYPES: Readonly<Record<string, number>> = { email: 1, DNS: 2, URI: 6, 'IP Address': 7 };

/** The subject alternative names as the JDK lists them: `[2, localhost]`, `[7, 127.0.0.1]`. */
function subjectAltNames(certificate: X509Certificate): string[] {
  const text = certificate.subjectAltName;
  if (text === undefined || text === '') return [];
  return text.split(', ').map((entry) => {
    const colon = entry.indexOf(':');
    const type = entry.slice(0, colon);
    return `[${GENERAL_NAME_TYPES[type] ?? type}, ${entry.slice(colon + 1)}]`;
  });
}

/** The leaf certificate a listener's TLS options serve, with its keystore alias. */
function keystoreEntry(tls: TlsListenOptions): KeystoreEntry {
  if (tls.cert !== undefined) return { alias: PEM_ALIAS, certificate: new X509Certificate(tls.cert) };
  if (tls.pfx === undefined) throw new Error('a TLS listener without a keystore');
  const p12 = forge.pkcs12.pkcs12FromAsn1(forge.asn1.fromDer(forge.util.createBuffer(tls.pfx.toString('binary'))), false, tls.passphrase ?? '');
  const keyBags = p12.getBags({ bagType: forge.pki.oids.pkcs8ShroudedKeyBag! })[forge.pki.oids.pkcs8ShroudedKeyBag!] ?? [];
  const keyId = keyBags[0]?.attributes.localKeyId?.[0];
  const certBags = p12.getBags({ bagType: forge.pki.oids.certBag! })[forge.pki.oids.certBag!] ?? [];
  const leaf = certBags.find((bag) => keyId !== undefined && bag.attributes.localKeyId?.[0] === keyId) ?? certBags[0];
  if (leaf?.cert === undefined || leaf.cert === null) throw new Error('a PKCS12 keystore without a certificate');
  const der = Buffer.from(forge.asn1.toDer(forge.pki.certificateToAsn1(leaf.cert)).getBytes(), 'binary');
  return { alias: leaf.attributes.friendlyName?.[0] ?? keyBags[0]?.attributes.friendlyName?.[0] ?? PEM_ALIAS, certificate: new X509Certificate(der) };
}
