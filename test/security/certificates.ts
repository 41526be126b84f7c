/**
 * Test-only PKI, made afresh by each test run with the openssl command (no
 * private key is committed): a CA, a server certificate for 127.0.0.1 and
 * localhost, a client certificate for `CN=alice,OU=eng,O=Acme,C=US`, and a
 * client certificate from a CA the broker does not trust. Also the same
 * server identity as an encrypted PKCS#8 key, a PKCS12 keystore, and a
 * PKCS12 truststore holding the CA.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const STORE_PASSWORD = 'test-store-password';
export const KEY_PASSWORD = 'test-key-password';

export interface TestPki {
  dir: string;
  caPem: string;
  /** Server key and certificate chain in one PEM file (ssl.keystore.type=PEM). */
  serverPemPath: string;
  serverKey: string;
  serverChain: string;
  /** The server key as encrypted PKCS#8 (ssl.key.password=KEY_PASSWORD). */
  serverEncryptedKey: string;
  /** PKCS12 keystore of the server (password STORE_PASSWORD). */
  serverP12Path: string;
  /** PKCS12 truststore with the CA (password STORE_PASSWORD). */
  truststoreP12Path: string;
  /** CA certificate as a PEM file. */
  caPemPath: string;
  client: { key: string; cert: string };
  untrustedClient: { key: string; cert: string };
  /** Another server identity from the same CA, as a PEM keystore file (key, certificate, CA); `sans` as openssl's subjectAltName. */
  issueServerKeystore(options: { name: string; subject: string; sans: string }): { path: string; key: string; chain: string };
  remove(): void;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

function makeCa(dir: string, name: string): void {
  openssl(dir, ['req', '-x509', ...EC_KEY, '-keyout', `${name}.key`, '-out', `${name}.pem`, '-days', '2', '-subj', `/CN=Spool test ${name}`]);
}

function issue(dir: string, options: { name: string; ca: string; subject: string; extensions?: string }): { key: string; cert: string } {
  const { name, ca } = options;
  openssl(dir, ['req', ...EC_KEY, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', options.subject]);
  const ext = options.extensions === undefined ? [] : (writeFileSync(join(dir, `${name}.ext`), options.extensions), ['-extfile', `${name}.ext`]);
  openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.pem`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-out', `${name}.crt`, '-days', '2', ...ext]);
  return { key: readFileSync(join(dir, `${name}.key`), 'utf8'), cert: readFileSync(join(dir, `${name}.crt`), 'utf8') };
}

export function makeTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'spool-pki-'));
  makeCa(dir, 'ca');
  makeCa(dir, 'rogue-ca');
  const server = issue(dir, { name: 'server', ca: 'ca', subject: '/CN=localhost', extensions: 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' });
  const client = issue(dir, { name: 'alice', ca: 'ca', subject: '/C=US/O=Acme/OU=eng/CN=alice' });
  const untrustedClient = issue(dir, { name: 'mallory', ca: 'rogue-ca', subject: '/CN=mallory' });
  const caPem = readFileSync(join(dir, 'ca.pem'), 'utf8');
  writeFileSync(join(dir, 'server-keystore.pem'), server.key + server.cert + caPem);
  openssl(dir, ['pkcs8', '-topk8', '-in', 'server.key', '-out', 'server-enc.key', '-passout', `pass:${KEY_PASSWORD}`]);
  openssl(dir, ['pkcs12', '-export', '-inkey', 'server.key', '-in', 'server.crt', '-certfile', 'ca.pem', '-out', 'server.p12', '-passout', `pass:${STORE_PASSWORD}`]);
  openssl(dir, ['pkcs12', '-export', '-nokeys', '-in', 'ca.pem', '-out', 'truststore.p12', '-passout', `pass:${STORE_PASSWORD}`]);
  return {
    dir,
    caPem,
    serverPemPath: join(dir, 'server-keystore.pem'),
    serverKey: server.key,
    serverChain: server.cert + caPem,
    serverEncryptedKey: readFileSync(join(dir, 'server-enc.key'), 'utf8'),
    serverP12Path: join(dir, 'server.p12'),
    truststoreP12Path: join(dir, 'truststore.p12'),
    caPemPath: join(dir, 'ca.pem'),
    client,
    untrustedClient,
    issueServerKeystore({ name, subject, sans }) {
      const issued = issue(dir, { name, ca: 'ca', subject, extensions: `subjectAltName=${sans}\n` });
      const path = join(dir, `${name}-keystore.pem`);
      writeFileSync(path, issued.key + issued.cert + caPem);
      return { path, key: issued.key, chain: issued.cert + caPem };
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
