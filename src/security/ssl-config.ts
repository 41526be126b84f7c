/**
 * A TLS listener's settings, read as Kafka reads them: each `ssl.*` setting
 * from `listener.name.<listener>.<setting>` when present, else from the
 * broker-wide setting, else Kafka's default.
 *
 * Keystores and truststores are PEM (a file, or the inline
 * `ssl.keystore.key` / `ssl.keystore.certificate.chain` /
 * `ssl.truststore.certificates`) or PKCS12. Kafka's default type is JKS; a
 * Java keystore of type JKS that is really a PKCS12 file is read as one, as
 * the JVM does (keystore.type.compat), and a true JKS file is refused with a
 * hint to convert it, since its format is Java's alone.
 *
 * `ssl.client.auth` (none, requested, required) asks for a client
 * certificate; on a SASL_SSL listener only the listener-prefixed setting
 * counts (KIP-684), since SASL authenticates there.
 */
import { X509Certificate } from 'node:crypto';
import forge from 'node-forge';
import { ConfigError, type BrokerConfig } from '../common/config.js';
import type { FileSystem } from '../io/fs.js';
import type { TlsListenOptions } from '../io/net.js';
import { SslPrincipalMapper } from './ssl-principal-mapper.js';

export type SslClientAuth = 'none' | 'requested' | 'required';

/** The ssl.* settings with Kafka's defaults (null: no default). */
const SSL_DEFAULTS = {
  'ssl.keystore.type': 'JKS',
  'ssl.keystore.location': null,
  'ssl.keystore.password': null,
  'ssl.key.password': null,
  'ssl.keystore.key': null,
  'ssl.keystore.certificate.chain': null,
  'ssl.truststore.type': 'JKS',
  'ssl.truststore.location': null,
  'ssl.truststore.password': null,
  'ssl.truststore.certificates': null,
  'ssl.client.auth': 'none',
  'ssl.enabled.protocols': 'TLSv1.2,TLSv1.3',
  'ssl.cipher.suites': '',
  'ssl.principal.mapping.rules': 'DEFAULT',
} as const;

export type SslSetting = keyof typeof SSL_DEFAULTS;

/** `listener.name.<listener>.<name>`, the per-listener override Kafka looks up first. */
export function listenerPrefixed(listenerName: string, name: string): string {
  return `listener.name.${listenerName.toLowerCase()}.${name}`;
}

/** A listener's value of a setting Spool reads only from the explicit config: override, broker-wide, default. */
export function listenerSetting(config: BrokerConfig, listenerName: string, name: string, fallback: string | null = null): string | null {
  return config.explicit.get(listenerPrefixed(listenerName, name)) ?? config.explicit.get(name) ?? fallback;
}

function sslSetting(config: BrokerConfig, listenerName: string, name: SslSetting): string | null {
  return listenerSetting(config, listenerName, name, SSL_DEFAULTS[name]);
}

export interface SslListenerSettings {
  tls: TlsListenOptions;
  clientAuth: SslClientAuth;
  principalMapper: SslPrincipalMapper;
}

/** Resolves and loads a TLS listener's keystore, truststore and options; a ConfigError names what is wrong. */
export async function sslListenerSettings(
  config: BrokerConfig,
  listener: { name: string; securityProtocol: string },
  fs: FileSystem,
): Promise<SslListenerSettings> {
  const setting = (name: SslSetting) => sslSetting(config, listener.name, name);
  const clientAuth = clientAuthOf(config, listener);
  const principalMapper = principalMapperOf(setting('ssl.principal.mapping.rules')!);
  const keystore = await loadKeystore(setting, fs);
  const ca = await loadTruststore(setting, fs);
  const tls: TlsListenOptions = {
    ...keystore,
    ...(ca.length > 0 ? { ca } : {}),
    ...protocolRange(setting('ssl.enabled.protocols')!),
    ...cipherOptions(setting('ssl.cipher.suites')!),
    requestCert: clientAuth !== 'none',
    // 'requested' still refuses a certificate that is presented and not trusted, as the JVM does: checked after the handshake.
    rejectUnauthorized: clientAuth === 'required',
  };
  return { tls, clientAuth, principalMapper };
}

function clientAuthOf(config: BrokerConfig, listener: { name: string; securityProtocol: string }): SslClientAuth {
  const prefixed = config.explicit.get(listenerPrefixed(listener.name, 'ssl.client.auth'));
  const value = listener.securityProtocol === 'SASL_SSL' ? (prefixed ?? 'none') : (prefixed ?? config.explicit.get('ssl.client.auth') ?? 'none');
  const normalised = value.trim().toLowerCase();
  if (normalised === 'none' || normalised === 'requested' || normalised === 'required') return normalised;
  throw new ConfigError(`Invalid value ${value} for configuration ssl.client.auth: String must be one of: required, requested, none`);
}

function principalMapperOf(rules: string): SslPrincipalMapper {
  try {
    return new SslPrincipalMapper(rules);
  } catch (error) {
    throw new ConfigError(`Invalid value ${rules} for configuration ssl.principal.mapping.rules: ${(error as Error).message}`);
  }
}

type Setting = (name: SslSetting) => string | null;

async function loadKeystore(setting: Setting, fs: FileSystem): Promise<Pick<TlsListenOptions, 'key' | 'cert' | 'pfx' | 'passphrase'>> {
  const type = setting('ssl.keystore.type')!.toUpperCase();
  const inlineKey = setting('ssl.keystore.key');
  const inlineChain = setting('ssl.keystore.certificate.chain');
  const keyPassword = setting('ssl.key.password');
  if (inlineKey !== null || inlineChain !== null) {
    if (type !== 'PEM') throw new ConfigError(`ssl.keystore.key and ssl.keystore.certificate.chain need ssl.keystore.type=PEM, not ${type}`);
    if (inlineKey === null || inlineChain === null) throw new ConfigError('ssl.keystore.key and ssl.keystore.certificate.chain must be set together');
    return pemKeystore(inlineKey + '\n' + inlineChain, keyPassword);
  }
  const location = setting('ssl.keystore.location');
  if (location === null) throw new ConfigError('A TLS listener needs a keystore: set ssl.keystore.location (or ssl.keystore.key and ssl.keystore.certificate.chain)');
  const bytes = await readStore(fs, location, 'ssl.keystore.location');
  if (type === 'PEM') return pemKeystore(bytes.toString('utf8'), keyPassword);
  pkcs12Bytes(bytes, type, 'ssl.keystore.type');
  const password = setting('ssl.keystore.password') ?? keyPassword ?? '';
  return { pfx: bytes, passphrase: password };
}

/**
 * PEM blocks of one kind (`CERTIFICATE`, or any `... PRIVATE KEY`), re-wrapped:
 * an inline value in a properties file often loses its line breaks, which
 * Kafka's PEM reader ignores and OpenSSL does not.
 */
function pemBlocks(text: string, label: RegExp): string[] {
  const blocks = [...text.matchAll(/-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g)];
  return blocks
    .filter((block) => label.test(block[1]!))
    .map((block) => {
      const body = block[2]!.replace(/\s+/g, '').replace(/(.{64})/g, '$1\n').replace(/\n$/, '');
      return `-----BEGIN ${block[1]}-----\n${body}\n-----END ${block[1]}-----\n`;
    });
}

function pemKeystore(text: string, keyPassword: string | null): Pick<TlsListenOptions, 'key' | 'cert' | 'passphrase'> {
  const keys = pemBlocks(text, /PRIVATE KEY$/);
  const certs = pemBlocks(text, /^CERTIFICATE$/);
  if (keys.length !== 1) throw new ConfigError(`A PEM keystore needs exactly one private key, found ${keys.length}`);
  if (certs.length === 0) throw new ConfigError('A PEM keystore needs a certificate chain, found no certificate');
  return { key: keys[0]!, cert: certs.join('\n'), ...(keyPassword !== null ? { passphrase: keyPassword } : {}) };
}

async function loadTruststore(setting: Setting, fs: FileSystem): Promise<string[]> {
  const type = setting('ssl.truststore.type')!.toUpperCase();
  const inline = setting('ssl.truststore.certificates');
  if (inline !== null) {
    if (type !== 'PEM') throw new ConfigError(`ssl.truststore.certificates needs ssl.truststore.type=PEM, not ${type}`);
    return trustedPem(inline);
  }
  const location = setting('ssl.truststore.location');
  if (location === null) return [];
  const bytes = await readStore(fs, location, 'ssl.truststore.location');
  if (type === 'PEM') return trustedPem(bytes.toString('utf8'));
  return pkcs12Certificates(pkcs12Bytes(bytes, type, 'ssl.truststore.type'), setting('ssl.truststore.password'));
}

function trustedPem(text: string): string[] {
  const certs = pemBlocks(text, /^CERTIFICATE$/);
  if (certs.length === 0) throw new ConfigError('A PEM truststore needs at least one certificate');
  return certs;
}

async function readStore(fs: FileSystem, location: string, name: string): Promise<Buffer> {
  try {
    return await fs.readFile(location);
  } catch (error) {
    throw new ConfigError(`Failed to load ${location} (${name}): ${(error as Error).message}`);
  }
}

/** The JKS file magic: a Java-only format Spool cannot read. */
const JKS_MAGIC = 0xfeedfeed;

function pkcs12Bytes(bytes: Buffer, type: string, name: string): Buffer {
  if (type !== 'PKCS12' && type !== 'JKS') throw new ConfigError(`Invalid value ${type} for configuration ${name}: Spool reads PKCS12 and PEM stores (and JKS-typed PKCS12 files)`);
  if (bytes.length >= 4 && bytes.readUInt32BE(0) === JKS_MAGIC) {
    throw new ConfigError(`${name}=${type} names a JKS file, a format only Java reads: convert it with keytool -importkeystore -deststoretype PKCS12`);
  }
  return bytes;
}

/** The trusted certificates of a PKCS12 truststore, as PEM. */
function pkcs12Certificates(bytes: Buffer, password: string | null): string[] {
  let certificates: string[];
  try {
    const asn1 = forge.asn1.fromDer(forge.util.createBuffer(bytes.toString('binary')));
    // Without a password the JVM still reads a truststore's certificates, skipping the integrity check.
    const p12 = password === null ? forge.pkcs12.pkcs12FromAsn1(asn1, false) : forge.pkcs12.pkcs12FromAsn1(asn1, false, password);
    const bags = p12.getBags({ bagType: forge.pki.oids.certBag! })[forge.pki.oids.certBag!] ?? [];
    certificates = bags.map((bag) => {
      const asn1Cert = bag.cert !== undefined && bag.cert !== null ? forge.pki.certificateToAsn1(bag.cert) : (bag as { asn1: forge.asn1.Asn1 }).asn1;
      return new X509Certificate(Buffer.from(forge.asn1.toDer(asn1Cert).getBytes(), 'binary')).toString();
    });
  } catch (error) {
    throw new ConfigError(`Failed to read the PKCS12 truststore: ${(error as Error).message}`);
  }
  if (certificates.length === 0) throw new ConfigError('The PKCS12 truststore holds no certificate');
  return certificates;
}

const TLS_VERSIONS = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'] as const;
type TlsVersion = (typeof TLS_VERSIONS)[number];

/** ssl.enabled.protocols as Node can express it: the lowest to the highest version listed. */
function protocolRange(enabled: string): Pick<TlsListenOptions, 'minVersion' | 'maxVersion'> {
  const versions = enabled.split(',').map((v) => v.trim()).filter((v): v is TlsVersion => (TLS_VERSIONS as readonly string[]).includes(v));
  if (versions.length === 0) throw new ConfigError(`ssl.enabled.protocols=${enabled} names no TLS version Spool serves (${TLS_VERSIONS.join(', ')})`);
  const indexes = versions.map((v) => TLS_VERSIONS.indexOf(v));
  return { minVersion: TLS_VERSIONS[Math.min(...indexes)]!, maxVersion: TLS_VERSIONS[Math.max(...indexes)]! };
}

/**
 * ssl.cipher.suites in Kafka's (IANA) names. TLS 1.3 suites keep their
 * names in OpenSSL; a TLS 1.2 AEAD suite (`TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256`)
 * becomes OpenSSL's spelling (`ECDHE-RSA-AES128-GCM-SHA256`).
 */
function cipherOptions(suites: string): Pick<TlsListenOptions, 'ciphers'> {
  const names = suites.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (names.length === 0) return {};
  return { ciphers: names.map((name) => (/^TLS_(AES|CHACHA20)_/.test(name) ? name : openSslCipherName(name))).join(':') };
}

function openSslCipherName(iana: string): string {
  const match = /^TLS_(ECDHE|DHE)_(RSA|ECDSA)_WITH_(AES_128_GCM|AES_256_GCM|CHACHA20_POLY1305)_(SHA256|SHA384)$/.exec(iana);
  if (match === null) throw new ConfigError(`ssl.cipher.suites: Spool cannot serve ${iana} (it maps TLS 1.3 suites and TLS 1.2 ECDHE/DHE AEAD suites)`);
  const [, kx, auth, cipher, mac] = match;
  const kxAuth = kx === 'DHE' && auth === 'RSA' ? 'DHE-RSA' : `${kx}-${auth}`;
  if (cipher === 'CHACHA20_POLY1305') return `${kxAuth}-CHACHA20-POLY1305`;
  return `${kxAuth}-${cipher!.replace('AES_128_GCM', 'AES128-GCM').replace('AES_256_GCM', 'AES256-GCM')}-${mac}`;
}
