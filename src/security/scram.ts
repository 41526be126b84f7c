/**
 * SCRAM's arithmetic (RFC 5802, RFC 7677) with Kafka's mechanism table
 * (ScramMechanism, ScramFormatter): the keys a credential stores and the
 * signatures an exchange checks.
 *
 *   SaltedPassword = PBKDF2-HMAC(password, salt, iterations)   (the client computes it)
 *   ClientKey = HMAC(SaltedPassword, "Client Key"), StoredKey = H(ClientKey)
 *   ServerKey = HMAC(SaltedPassword, "Server Key")
 *   ClientSignature = HMAC(StoredKey, AuthMessage), ClientProof = ClientKey XOR ClientSignature
 *   ServerSignature = HMAC(ServerKey, AuthMessage)
 */
import { createHash, createHmac, pbkdf2Sync } from 'node:crypto';

export interface ScramMechanism {
  /** The type stored in UserScramCredentialRecord and carried by the admin APIs. */
  type: number;
  name: 'SCRAM-SHA-256' | 'SCRAM-SHA-512';
  hash: 'sha256' | 'sha512';
  /** Kafka's bounds on a credential's iteration count. */
  iterationsMin: number;
  iterationsMax: number;
}

export const SCRAM_MECHANISMS: readonly ScramMechanism[] = [
  { type: 1, name: 'SCRAM-SHA-256', hash: 'sha256', iterationsMin: 4096, iterationsMax: 16384 },
  { type: 2, name: 'SCRAM-SHA-512', hash: 'sha512', iterationsMin: 4096, iterationsMax: 16384 },
];

export function scramMechanismOfType(type: number): ScramMechanism | undefined {
  return SCRAM_MECHANISMS.find((m) => m.type === type);
}

export function scramMechanismNamed(name: string): ScramMechanism | undefined {
  return SCRAM_MECHANISMS.find((m) => m.name === name);
}

export const hmac = (mechanism: ScramMechanism, key: Buffer, text: Buffer | string): Buffer => createHmac(mechanism.hash, key).update(text).digest();
export const digest = (mechanism: ScramMechanism, data: Buffer): Buffer => createHash(mechanism.hash).update(data).digest();

/** What a credential stores, from the salted password an admin client sends (AlterUserScramCredentials). */
export function scramKeys(mechanism: ScramMechanism, saltedPassword: Buffer): { storedKey: Buffer; serverKey: Buffer } {
  return {
    storedKey: digest(mechanism, hmac(mechanism, saltedPassword, 'Client Key')),
    serverKey: hmac(mechanism, saltedPassword, 'Server Key'),
  };
}

/** The salted password of a clear-text one (what clients and `kafka-configs.sh` compute). */
export function saltedPassword(mechanism: ScramMechanism, password: string, salt: Buffer, iterations: number): Buffer {
  const bytes = mechanism.hash === 'sha256' ? 32 : 64;
  return pbkdf2Sync(Buffer.from(password.normalize('NFKC'), 'utf8'), salt, iterations, bytes, mechanism.hash);
}
