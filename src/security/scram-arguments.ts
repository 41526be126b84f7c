/**
 * `--add-scram` of `spool storage format` (KIP-900), as Kafka's ScramParser
 * reads it: `SCRAM-SHA-256=[name=alice,password=alice-secret]`, with
 * optional `iterations=` (default 4096), `salt=` (base64; default random)
 * and `saltedpassword=` (base64, instead of `password=`, needs `salt=`).
 * A value may be in double quotes. Each argument becomes one
 * UserScramCredentialRecord of the bootstrap snapshot.
 */
import type { Random } from '../io/random.js';
import type { RecordData } from '../metadata/records.js';
import { saltedPassword, scramKeys, scramMechanismNamed, type ScramMechanism } from './scram.js';

/** Kafka's default iteration count for a formatted credential. */
const DEFAULT_ITERATIONS = 4096;
/** Kafka's ScramFormatter.secureRandomBytes: a random 130-bit number in base 36, as ASCII. */
const RANDOM_SALT_BITS = 130n;
/** What Java's Base64 decoder accepts: the standard alphabet, padding optional. */
const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;

export class ScramArgumentError extends Error {
  override readonly name = 'ScramArgumentError';
}

export type ScramCredentialRecord = RecordData<'UserScramCredentialRecord'>;

/** The records of the `--add-scram` arguments, in their order. */
export function parseScramArguments(args: readonly string[], random: Random): ScramCredentialRecord[] {
  return args.map((arg) => credentialRecord(arg, random));
}

function credentialRecord(argument: string, random: Random): ScramCredentialRecord {
  const input = argument.trim();
  const equals = input.indexOf('=');
  if (equals < 0) throw new ScramArgumentError(`Failed to find equals sign in SCRAM argument '${input}'`);
  const mechanismName = input.slice(0, equals);
  const body = input.slice(equals + 1);
  const mechanism = scramMechanismNamed(mechanismName);
  if (mechanism === undefined) throw new ScramArgumentError(`The add-scram mechanism ${mechanismName} is not supported.`);
  if (!body.startsWith('[')) throw new ScramArgumentError('Expected configuration string to start with [');
  if (!body.endsWith(']')) throw new ScramArgumentError('Expected configuration string to end with ]');
  const components = new Map<string, string>();
  for (const component of body.slice(1, -1).split(',')) {
    const [key, value] = splitComponent(component);
    components.set(key, value);
  }
  const take = (key: string): string | undefined => {
    const value = components.get(key);
    components.delete(key);
    return value;
  };
  const name = take('name');
  if (name === undefined) throw new ScramArgumentError("You must supply 'name' to add-scram");
  const saltText = take('salt');
  const salt = saltText === undefined ? undefined : decodeBase64(saltText, 'Failed to decode given salt: ');
  const iterationsText = take('iterations');
  const iterations = iterationsText === undefined ? DEFAULT_ITERATIONS : parseIterations(iterationsText);
  const password = take('password');
  const saltedText = take('saltedpassword');
  if (password === undefined && saltedText === undefined) throw new ScramArgumentError("You must supply one of 'password' or 'saltedpassword' to add-scram");
  if (password === undefined && salt === undefined) throw new ScramArgumentError("You must supply 'salt' with 'saltedpassword' to add-scram");
  const given = password === undefined ? decodeBase64(saltedText!, 'Failed to decode given saltedPassword: ') : undefined;
  if (components.size > 0) throw new ScramArgumentError(`Unknown SCRAM configurations: ${[...components.keys()].sort().join(', ')}`);
  checkIterations(mechanism, iterations);
  const credentialSalt = salt ?? randomSalt(random);
  const salted = given ?? saltedPassword(mechanism, password!, credentialSalt, iterations);
  return { name, mechanism: mechanism.type, salt: credentialSalt, ...scramKeys(mechanism, salted), iterations };
}

/** `key=value`, the value unquoted when it is in double quotes (Kafka's splitTrimmedConfigStringComponent). */
function splitComponent(component: string): [string, string] {
  const equals = component.indexOf('=');
  if (equals < 0) throw new ScramArgumentError(`No equals sign found in SCRAM component: ${component}`);
  let value = component.slice(equals + 1);
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
  return [component.slice(0, equals), value];
}

function decodeBase64(text: string, message: string): Buffer {
  if (!STRICT_BASE64.test(text)) throw new ScramArgumentError(`${message}${text}`);
  return Buffer.from(text, 'base64');
}

function parseIterations(text: string): number {
  const value = /^[+-]?\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(value) || value > 2 ** 31 - 1 || value < -(2 ** 31)) throw new ScramArgumentError(`Failed to parse iterations count: ${text}`);
  return value;
}

function checkIterations(mechanism: ScramMechanism, iterations: number): void {
  if (iterations < mechanism.iterationsMin) throw new ScramArgumentError(`The 'iterations' value must be >= ${mechanism.iterationsMin} for add-scram using ${mechanism.name.replaceAll('-', '_')}`);
  if (iterations > mechanism.iterationsMax) throw new ScramArgumentError(`The 'iterations' value must be <= ${mechanism.iterationsMax} for add-scram using ${mechanism.name.replaceAll('-', '_')}`);
}

function randomSalt(random: Random): Buffer {
  const bytes = random.bytes(17);
  const value = BigInt(`0x${bytes.toString('hex')}`) & ((1n << RANDOM_SALT_BITS) - 1n);
  return Buffer.from(value.toString(36), 'ascii');
}

/** A record as Kafka's generated toString prints it (byte arrays as Java's Arrays.toString of signed bytes). */
export function describeScramRecord(record: ScramCredentialRecord): string {
  const bytes = (buffer: Buffer) => `[${[...new Int8Array(buffer.buffer, buffer.byteOffset, buffer.length)].join(', ')}]`;
  return `UserScramCredentialRecord(name='${record.name}', mechanism=${record.mechanism}, salt=${bytes(record.salt)}, storedKey=${bytes(record.storedKey)}, serverKey=${bytes(record.serverKey)}, iterations=${record.iterations})`;
}
