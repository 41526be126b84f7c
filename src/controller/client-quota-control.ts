/**
 * AlterClientQuotas on the controller, as Kafka's ClientQuotaControlManager:
 * each entity is validated (known component types, no empty names, `ip`
 * alone and a valid address), each quota key against the entity's keys
 * (user/client-id: producer_byte_rate, consumer_byte_rate as longs,
 * request_percentage, controller_mutation_rate as doubles; ip:
 * connection_creation_rate as an int), each value finite, positive, in its
 * type's range and integral where the type is. An invalid entity or value
 * is INVALID_REQUEST for that entity only, with Kafka's message; an entity
 * altered twice in a request is answered "Ignoring duplicate entity" the
 * second time. A value equal to the stored one, or the removal of an unset
 * key, writes nothing. validateOnly answers the same and writes nothing.
 */
import { isIpAddress } from '../io/net.js';
import { ErrorCode } from '../protocol/errors.js';
import { metadataRecord, type MetadataRecord } from '../metadata/records.js';
import {
  clientQuotaEntityKey,
  ClientQuotaEntityType,
  componentsOf,
  describeEntity,
  entityOf,
  QuotaKey,
  type ClientQuotaEntity,
  type EntityComponent,
} from '../metadata/client-quotas.js';
import type { ControllerContext } from './context.js';
import type { ApiError, ControllerResult } from './result.js';

export interface ClientQuotaOp {
  key: string;
  value: number;
  remove: boolean;
}

export interface ClientQuotaAlteration {
  entity: readonly EntityComponent[];
  ops: readonly ClientQuotaOp[];
}

export interface ClientQuotaAlterationResult extends ApiError {
  entity: EntityComponent[];
}

type QuotaType = 'LONG' | 'INT' | 'DOUBLE';

/** Kafka's QuotaConfig.userAndClientQuotaConfigs() and ipConfigs(), with their ConfigDef types. */
const USER_AND_CLIENT_KEYS: ReadonlyMap<string, QuotaType> = new Map([
  [QuotaKey.PRODUCER_BYTE_RATE, 'LONG'],
  [QuotaKey.CONSUMER_BYTE_RATE, 'LONG'],
  [QuotaKey.REQUEST_PERCENTAGE, 'DOUBLE'],
  [QuotaKey.CONTROLLER_MUTATION_RATE, 'DOUBLE'],
]);
const IP_KEYS: ReadonlyMap<string, QuotaType> = new Map([[QuotaKey.CONNECTION_CREATION_RATE, 'INT']]);

const KNOWN_TYPES = new Set<string>(Object.values(ClientQuotaEntityType));
/** Kafka allows a fraction this small in an integral quota (floating-point noise from the client's double). */
const INTEGRAL_TOLERANCE = 1e-6;
const INT_MAX = 2_147_483_647;
const LONG_MAX = 9.223372036854776e18;

const invalid = (errorMessage: string): ApiError => ({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage });
const NONE: ApiError = { errorCode: ErrorCode.NONE, errorMessage: null };

function entityProblem(entity: ClientQuotaEntity): ApiError | null {
  if (entity.size === 0) return invalid('Invalid empty client quota entity');
  for (const { entityType, entityName } of componentsOf(entity)) {
    if (!KNOWN_TYPES.has(entityType)) return invalid(`Unhandled client quota entity type: ${entityType}`);
    if (entityName === '') return invalid(`Empty ${entityType} not supported`);
  }
  return null;
}

/**
 * Kafka resolves a named ip entity with InetAddress.getByName; the controller
 * does no DNS lookups, so Spool takes address literals and `localhost`.
 */
function isValidIpEntity(ip: string | null): boolean {
  return ip === null || isIpAddress(ip) || ip === 'localhost';
}

function quotaKeysOf(entity: ClientQuotaEntity): ReadonlyMap<string, QuotaType> | ApiError {
  const hasIp = entity.has(ClientQuotaEntityType.IP);
  if (!hasIp) return USER_AND_CLIENT_KEYS;
  if (entity.has(ClientQuotaEntityType.USER) || entity.has(ClientQuotaEntityType.CLIENT_ID)) {
    // Kafka's message, its missing space included.
    return invalid('Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId');
  }
  const ip = entity.get(ClientQuotaEntityType.IP) ?? null;
  if (!isValidIpEntity(ip)) return invalid(`${ip} is not a valid IP or resolvable host.`);
  return IP_KEYS;
}

function valueProblem(keys: ReadonlyMap<string, QuotaType>, key: string, value: number): ApiError | null {
  const type = keys.get(key);
  if (type === undefined) return invalid(`Invalid configuration key ${key}`);
  if (!Number.isFinite(value)) return invalid(`Quota ${key} must be a finite number`);
  if (value <= 0) return invalid(`Quota ${key} must be greater than 0`);
  if (type === 'DOUBLE') return null;
  if (type === 'INT' && value > INT_MAX) return invalid(`Proposed value for ${key} is too large for an INT.`);
  if (type === 'LONG' && value > LONG_MAX) return invalid(`Proposed value for ${key} is too large for a LONG.`);
  if (Math.abs(value % 1) > INTEGRAL_TOLERANCE) return invalid(`${key} cannot be a fractional value.`);
  return null;
}

/** The records one valid entity's ops write, or the error that rejects them all. */
function alterEntity(
  context: ControllerContext,
  entity: ClientQuotaEntity,
  ops: ReadonlyMap<string, number | null>,
): { records: MetadataRecord[]; error: ApiError } {
  const problem = entityProblem(entity);
  if (problem !== null) return { records: [], error: problem };
  const keys = quotaKeysOf(entity);
  if ('errorCode' in keys) return { records: [], error: keys };
  const current = context.image.clientQuotas.get(clientQuotaEntityKey(entity))?.quotas ?? new Map<string, number>();
  const records: MetadataRecord[] = [];
  const components = componentsOf(entity);
  for (const [key, value] of ops) {
    if (value === null) {
      if (current.has(key)) records.push(metadataRecord('ClientQuotaRecord', { entity: components, key, value: 0, remove: true }));
      continue;
    }
    const error = valueProblem(keys, key, value);
    if (error !== null) return { records: [], error };
    if (current.get(key) !== value) records.push(metadataRecord('ClientQuotaRecord', { entity: components, key, value, remove: false }));
  }
  return { records, error: NONE };
}

export function alterClientQuotas(
  context: ControllerContext,
  alterations: readonly ClientQuotaAlteration[],
  options: { validateOnly: boolean },
): ControllerResult<ClientQuotaAlterationResult[]> {
  const results = new Map<string, { entity: ClientQuotaEntity; error: ApiError }>();
  const records: MetadataRecord[] = [];
  for (const alteration of alterations) {
    const entity = entityOf(alteration.entity);
    const id = clientQuotaEntityKey(entity);
    const ops = new Map<string, number | null>();
    let duplicateKey = false;
    for (const op of alteration.ops) {
      if (ops.has(op.key)) duplicateKey = true;
      else ops.set(op.key, op.remove ? null : op.value);
    }
    // Kafka marks a repeated key on the entity and then, finding the entity marked, answers as for a repeated entity.
    if (duplicateKey || results.has(id)) {
      results.set(id, { entity, error: invalid(`Ignoring duplicate entity ${describeEntity(entity)}`) });
      continue;
    }
    const outcome = alterEntity(context, entity, ops);
    records.push(...outcome.records);
    results.set(id, { entity, error: outcome.error });
  }
  const response = [...results.values()].map(({ entity, error }) => ({ ...error, entity: componentsOf(entity) }));
  return { records: options.validateOnly ? [] : records, response };
}
