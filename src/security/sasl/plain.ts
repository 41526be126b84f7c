/**
 * SASL/PLAIN (RFC 4616) as Kafka's PlainSaslServer serves it: one client
 * message `authzid NUL authcid NUL password`; the authorization id must be
 * empty or the user name; the password is checked against `user_<name>`
 * options of the listener's PlainLoginModule JAAS entry, in constant time.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import type { SaslServer, SaslStep } from './mechanism.js';

export const PLAIN = 'PLAIN';

/** Compares secrets without leaking where they differ (or their lengths) through timing. */
export function secretsEqual(a: Buffer, b: Buffer): boolean {
  const digest = (value: Buffer) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(a), digest(b)) && a.length === b.length;
}

const revealed = (message: string): SaslStep => ({ kind: 'failed', message, reveal: true });

export class PlainSaslServer implements SaslServer {
  readonly mechanism = PLAIN;

  /** `users`: user name -> password, from the JAAS entry's user_<name> options. */
  constructor(private readonly users: ReadonlyMap<string, string>) {}

  evaluate(token: Buffer): SaslStep {
    const parts = token.toString('utf8').split('\u0000');
    if (parts.length !== 3) return revealed(`Invalid SASL/PLAIN response: expected 3 tokens, got ${parts.length}`);
    const [authorizationId, username, password] = parts as [string, string, string];
    if (username === '') return revealed('Authentication failed: username not specified');
    if (password === '') return revealed('Authentication failed: password not specified');
    const expected = this.users.get(username);
    // An unknown user costs the same comparison as a wrong password.
    const matches = secretsEqual(Buffer.from(password), Buffer.from(expected ?? '\u0000unknown-user'));
    if (expected === undefined || !matches) return revealed('Authentication failed: Invalid username or password');
    if (authorizationId !== '' && authorizationId !== username) {
      return revealed('Authentication failed: Client requested an authorization id that is different from username');
    }
    return { kind: 'complete', token: Buffer.alloc(0), authorizationId: username };
  }
}

/** The users a PlainLoginModule JAAS entry declares (`user_alice="secret"`). */
export function plainUsers(options: ReadonlyMap<string, string>): Map<string, string> {
  const users = new Map<string, string>();
  for (const [key, value] of options) if (key.startsWith('user_')) users.set(key.slice('user_'.length), value);
  return users;
}
