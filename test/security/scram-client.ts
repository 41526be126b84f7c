/**
 * The client side of a SCRAM exchange for tests (RFC 5802), written from
 * the RFC: the client-first message, and the client-final message with its
 * proof for a server-first message; checks the server's signature.
 */
import { createHash, createHmac, pbkdf2Sync } from 'node:crypto';

export type Hash = 'sha256' | 'sha512';

export class ScramClient {
  readonly clientFirstBare: string;
  private authMessage = '';
  private saltedPassword = Buffer.alloc(0);

  constructor(
    private readonly hash: Hash,
    private readonly user: string,
    private readonly password: string,
    private readonly clientNonce = 'fyko+d2lbbFgONRv9qkxdawL',
  ) {
    this.clientFirstBare = `n=${user.replace(/=/g, '=3D').replace(/,/g, '=2C')},r=${clientNonce}`;
  }

  clientFirst(): Buffer {
    return Buffer.from(`n,,${this.clientFirstBare}`);
  }

  /** The client-final message answering `serverFirst`, or one with another nonce (`nonce`). */
  clientFinal(serverFirst: Buffer, options: { nonce?: string } = {}): Buffer {
    const text = serverFirst.toString();
    const fields = new Map(text.split(',').map((part) => [part[0]!, part.slice(2)]));
    const salt = Buffer.from(fields.get('s')!, 'base64');
    const iterations = Number(fields.get('i'));
    this.saltedPassword = pbkdf2Sync(this.password, salt, iterations, this.hash === 'sha256' ? 32 : 64, this.hash);
    const withoutProof = `c=biws,r=${options.nonce ?? fields.get('r')}`;
    this.authMessage = `${this.clientFirstBare},${text},${withoutProof}`;
    const clientKey = this.hmac(this.saltedPassword, 'Client Key');
    const storedKey = createHash(this.hash).update(clientKey).digest();
    const signature = this.hmac(storedKey, this.authMessage);
    const proof = Buffer.from(clientKey.map((byte, i) => byte ^ signature[i]!));
    return Buffer.from(`${withoutProof},p=${proof.toString('base64')}`);
  }

  /** True when the server-final message proves the server knows the credential. */
  verifiesServer(serverFinal: Buffer): boolean {
    const expected = this.hmac(this.hmac(this.saltedPassword, 'Server Key'), this.authMessage).toString('base64');
    return serverFinal.toString() === `v=${expected}`;
  }

  private hmac(key: Buffer, text: string): Buffer {
    return createHmac(this.hash, key).update(text).digest();
  }
}
