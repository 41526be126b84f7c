/**
 * AlterUserScramCredentials on the controller, as Kafka's
 * ScramControlManager: each user is altered at most once per request
 * (DUPLICATE_RESOURCE otherwise), a deletion needs an existing credential
 * (RESOURCE_NOT_FOUND), an upsertion an iteration count within the
 * mechanism's bounds (UNACCEPTABLE_CREDENTIAL); an unknown mechanism is
 * UNSUPPORTED_SASL_MECHANISM and an empty name UNACCEPTABLE_CREDENTIAL.
 * The salted password becomes the stored and server keys; the records are
 * written atomically.
 */
import { ErrorCode } from '../protocol/errors.js';
import { metadataRecord, type MetadataRecord } from '../metadata/records.js';
import { scramKeys, scramMechanismOfType } from '../security/scram.js';
import type { ControllerContext } from './context.js';
import type { ControllerResult } from './result.js';

export interface ScramCredentialDeletion {
  name: string;
  mechanism: number;
}

export interface ScramCredentialUpsertion extends ScramCredentialDeletion {
  iterations: number;
  salt: Buffer;
  saltedPassword: Buffer;
}

export interface AlterScramRequest {
  deletions: readonly ScramCredentialDeletion[];
  upsertions: readonly ScramCredentialUpsertion[];
}

export interface AlterScramResult {
  user: string;
  errorCode: number;
  errorMessage: string | null;
}

type Failure = { errorCode: number; message: string };

const TWICE: Failure = { errorCode: ErrorCode.DUPLICATE_RESOURCE, message: 'A user credential cannot be altered twice in the same request' };

function validateNameAndMechanism(name: string, mechanism: number): Failure | null {
  if (name === '') return { errorCode: ErrorCode.UNACCEPTABLE_CREDENTIAL, message: 'Username must not be empty' };
  if (scramMechanismOfType(mechanism) === undefined) return { errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, message: 'Unknown SCRAM mechanism' };
  return null;
}

function validateDeletion(context: ControllerContext, deletion: ScramCredentialDeletion): Failure | null {
  const problem = validateNameAndMechanism(deletion.name, deletion.mechanism);
  if (problem !== null) return problem;
  if (context.image.scramCredentials.get(deletion.name)?.has(deletion.mechanism) !== true) {
    return { errorCode: ErrorCode.RESOURCE_NOT_FOUND, message: 'Attempt to delete a user credential that does not exist' };
  }
  return null;
}

function validateUpsertion(upsertion: ScramCredentialUpsertion): Failure | null {
  const problem = validateNameAndMechanism(upsertion.name, upsertion.mechanism);
  if (problem !== null) return problem;
  const mechanism = scramMechanismOfType(upsertion.mechanism)!;
  if (upsertion.iterations < mechanism.iterationsMin) return { errorCode: ErrorCode.UNACCEPTABLE_CREDENTIAL, message: 'Too few iterations' };
  if (upsertion.iterations > mechanism.iterationsMax) return { errorCode: ErrorCode.UNACCEPTABLE_CREDENTIAL, message: 'Too many iterations' };
  return null;
}

export function alterUserScramCredentials(
  context: ControllerContext,
  request: AlterScramRequest,
): ControllerResult<AlterScramResult[]> {
  const deletions = new Map<string, ScramCredentialDeletion>();
  const upsertions = new Map<string, ScramCredentialUpsertion>();
  const failures = new Map<string, Failure>();
  for (const deletion of request.deletions) {
    if (failures.has(deletion.name)) continue;
    if (deletions.delete(deletion.name)) failures.set(deletion.name, TWICE);
    else record(failures, deletion.name, validateDeletion(context, deletion), () => deletions.set(deletion.name, deletion));
  }
  for (const upsertion of request.upsertions) {
    if (failures.has(upsertion.name)) continue;
    if (deletions.delete(upsertion.name) || upsertions.delete(upsertion.name)) failures.set(upsertion.name, TWICE);
    else record(failures, upsertion.name, validateUpsertion(upsertion), () => upsertions.set(upsertion.name, upsertion));
  }
  const records: MetadataRecord[] = [];
  const response: AlterScramResult[] = [];
  for (const { name, mechanism } of deletions.values()) {
    records.push(metadataRecord('RemoveUserScramCredentialRecord', { name, mechanism }));
    response.push({ user: name, errorCode: ErrorCode.NONE, errorMessage: null });
  }
  for (const upsertion of upsertions.values()) {
    const keys = scramKeys(scramMechanismOfType(upsertion.mechanism)!, upsertion.saltedPassword);
    records.push(metadataRecord('UserScramCredentialRecord', { name: upsertion.name, mechanism: upsertion.mechanism, salt: upsertion.salt, iterations: upsertion.iterations, ...keys }));
    response.push({ user: upsertion.name, errorCode: ErrorCode.NONE, errorMessage: null });
  }
  for (const [user, failure] of failures) response.push({ user, errorCode: failure.errorCode, errorMessage: failure.message });
  return { records, response };
}

function record(failures: Map<string, Failure>, name: string, problem: Failure | null, accept: () => void): void {
  if (problem === null) accept();
  else failures.set(name, problem);
}
