/** Helpers shared by the micro-benchmarks (bench/*-bench.ts). */

/** `--seconds N` from the command line, default 2. */
export function argSeconds(): number {
  const index = process.argv.indexOf('--seconds');
  return index < 0 ? 2 : Number(process.argv[index + 1]);
}

/** `--NAME VALUE` from the command line, or `fallback`. */
export function argument(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 && process.argv[index + 1] !== undefined ? process.argv[index + 1]! : fallback;
}

/** `bytes` printable-ish bytes from a fixed generator, so the codecs see realistic text-like data. */
export function textLikeValue(seed: number, bytes: number): Buffer {
  const out = Buffer.alloc(bytes);
  let state = seed >>> 0;
  for (let index = 0; index < out.length; index++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    out[index] = 0x61 + ((state >>> 24) % 16);
  }
  return out;
}
