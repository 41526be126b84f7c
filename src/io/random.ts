/**
 * Randomness behind an interface: real entropy in production, a seeded
 * generator in tests and the simulator so every run can be replayed.
 */
import { randomBytes, randomUUID } from 'node:crypto';

export interface Random {
  /** A uniform integer in [0, bound). */
  nextInt(bound: number): number;
  /** A uniform float in [0, 1). */
  nextFloat(): number;
  bytes(length: number): Buffer;
  /** A random (version 4) UUID as 16 bytes. */
  uuid(): Buffer;
}

export const realRandom: Random = {
  nextInt: (bound) => Math.floor(Math.random() * bound),
  nextFloat: () => Math.random(),
  bytes: (length) => randomBytes(length),
  uuid: () => Buffer.from(randomUUID().replaceAll('-', ''), 'hex'),
};

/** xoshiro128** seeded through splitmix32: small, fast and reproducible. */
export class SeededRandom implements Random {
  private readonly state = new Uint32Array(4);

  constructor(readonly seed: number) {
    let s = seed >>> 0;
    for (let i = 0; i < 4; i++) {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      this.state[i] = (z ^ (z >>> 16)) >>> 0;
    }
  }

  private nextUint32(): number {
    const s = this.state;
    const result = Math.imul(rotl(Math.imul(s[1]!, 5) >>> 0, 7), 9) >>> 0;
    const t = (s[1]! << 9) >>> 0;
    s[2]! ^= s[0]!;
    s[3]! ^= s[1]!;
    s[1]! ^= s[2]!;
    s[0]! ^= s[3]!;
    s[2]! ^= t;
    s[3] = rotl(s[3]!, 11);
    return result;
  }

  nextInt(bound: number): number {
    return Math.floor(this.nextFloat() * bound);
  }

  nextFloat(): number {
    return this.nextUint32() / 0x1_0000_0000;
  }

  bytes(length: number): Buffer {
    const out = Buffer.allocUnsafe(length);
    for (let i = 0; i < length; i++) out[i] = this.nextUint32() & 0xff;
    return out;
  }

  uuid(): Buffer {
    const id = this.bytes(16);
    id[6] = (id[6]! & 0x0f) | 0x40;
    id[8] = (id[8]! & 0x3f) | 0x80;
    return id;
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
