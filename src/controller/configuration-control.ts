/**
 * Dynamic configs (Kafka's ConfigurationControlManager): AlterConfigs
 * replaces a resource's whole set of overrides; IncrementalAlterConfigs
 * (KIP-339) sets, deletes, appends to or subtracts from single entries.
 * Topic configs live under the topic name, broker configs under the broker
 * id or '' for the cluster-wide default, group configs (KIP-848, KIP-932)
 * under the group id, whether or not the group exists. The config schema validates the
 * set a resource would have after the change; only then are ConfigRecords
 * written (value null deletes an entry).
 */
import { ErrorCode } from '../protocol/errors.js';
import { ConfigResourceType } from '../metadata/delta.js';
import { metadataRecord, type MetadataRecord } from '../metadata/records.js';
import type { ControllerContext, ConfigResourceRef } from './context.js';
import { result, type ApiError, type ControllerResult } from './result.js';

/** IncrementalAlterConfigs operations (AlterConfigOp.OpType ids). */
export const AlterConfigOp = { SET: 0, DELETE: 1, APPEND: 2, SUBTRACT: 3 } as const;
const OP_NAMES = ['SET', 'DELETE', 'APPEND', 'SUBTRACT'] as const;

export interface AlterableConfig {
  name: string;
  value: string | null;
}

export interface IncrementalAlterableConfig extends AlterableConfig {
  configOperation: number;
}

export interface ConfigResourceChange<C> {
  resourceType: number;
  resourceName: string;
  configs: readonly C[];
}

export interface ConfigResourceResult extends ApiError {
  resourceType: number;
  resourceName: string;
}

/** The current overrides of a resource, or an error when it cannot carry configs. */
function currentConfigs(context: ControllerContext, resource: ConfigResourceRef): ReadonlyMap<string, string> | ApiError {
  if (resource.type === ConfigResourceType.TOPIC) {
    const topic = context.image.topicsByName.get(resource.name);
    if (topic === undefined) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `The topic '${resource.name}' does not exist.` };
    return topic.configs;
  }
  if (resource.type === ConfigResourceType.BROKER) {
    if (resource.name !== '' && !/^\d+$/.test(resource.name)) {
      return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Unable to parse broker name as a base 10 number.' };
    }
    return context.image.brokerConfigs.get(resource.name) ?? new Map();
  }
  if (resource.type === ConfigResourceType.GROUP) {
    // The group need not exist: Kafka keeps configs for groups yet to be created.
    if (resource.name === '') return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: "Group name can't be empty." };
    return context.image.groupConfigs.get(resource.name) ?? new Map();
  }
  return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Unsupported resource type ${resource.type}.` };
}

/** Validates `next` against the schema and turns the difference with `current` into ConfigRecords. */
function changeRecords(
  context: ControllerContext,
  resource: ConfigResourceRef,
  current: ReadonlyMap<string, string>,
  next: ReadonlyMap<string, string | null>,
): MetadataRecord[] | ApiError {
  const changed = [...new Set([...current.keys(), ...next.keys()])].filter((name) => current.get(name) !== (next.get(name) ?? undefined));
  const problem = context.configSchema.validate(resource, next, changed);
  if (problem !== null) return { errorCode: problem.errorCode, errorMessage: problem.message };
  // Kafka rewrites broker entries even when unchanged (brokers reconfigure on each record); topics only on change.
  const names = resource.type === ConfigResourceType.BROKER ? [...new Set([...changed, ...next.keys()])] : changed;
  return names.map((name) =>
    metadataRecord('ConfigRecord', { resourceType: resource.type, resourceName: resource.name, name, value: next.get(name) ?? null }),
  );
}

/** Legacy AlterConfigs: the given entries become the resource's complete set of overrides. */
export function alterConfigs(
  context: ControllerContext,
  resources: readonly ConfigResourceChange<AlterableConfig>[],
  options: { validateOnly: boolean },
): ControllerResult<ConfigResourceResult[]> {
  return forEachResource(resources, options, (resource, configs) => {
    const current = currentConfigs(context, resource);
    if ('errorCode' in current) return current;
    const next = new Map<string, string | null>(configs.map((c) => [c.name, c.value]));
    return changeRecords(context, resource, current, next);
  });
}

export function incrementalAlterConfigs(
  context: ControllerContext,
  resources: readonly ConfigResourceChange<IncrementalAlterableConfig>[],
  options: { validateOnly: boolean },
): ControllerResult<ConfigResourceResult[]> {
  return forEachResource(resources, options, (resource, configs) => {
    const current = currentConfigs(context, resource);
    if ('errorCode' in current) return current;
    const next = new Map<string, string | null>(current);
    for (const config of configs) {
      const problem = applyOperation(context, resource, next, config);
      if (problem !== null) return problem;
    }
    for (const [name, value] of next) if (value === null) next.delete(name);
    return changeRecords(context, resource, current, next);
  });
}

function applyOperation(context: ControllerContext, resource: ConfigResourceRef, next: Map<string, string | null>, config: IncrementalAlterableConfig): ApiError | null {
  switch (config.configOperation) {
    case AlterConfigOp.SET:
      next.set(config.name, config.value);
      return null;
    case AlterConfigOp.DELETE:
      next.delete(config.name);
      return null;
    case AlterConfigOp.APPEND:
    case AlterConfigOp.SUBTRACT: {
      const op = OP_NAMES[config.configOperation]!;
      if (!context.configSchema.isSplittable(resource.type, config.name)) {
        return { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: `Can't ${op} to key ${config.name} because its type is not LIST.` };
      }
      const currentText = next.get(config.name) ?? context.configSchema.defaultValue(resource.type, config.name) ?? '';
      const items = splitList(currentText);
      const given = splitList(config.value ?? '');
      const updated = op === 'APPEND' ? [...items, ...given.filter((item) => !items.includes(item))] : items.filter((item) => !given.includes(item));
      next.set(config.name, updated.join(','));
      return null;
    }
    default:
      return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Unknown alter configs operation ${config.configOperation}` };
  }
}

function splitList(text: string): string[] {
  const trimmed = text.trim();
  return trimmed === '' ? [] : trimmed.split(/\s*,\s*/);
}

function forEachResource<C extends { name: string }>(
  resources: readonly ConfigResourceChange<C>[],
  options: { validateOnly: boolean },
  change: (resource: ConfigResourceRef, configs: readonly C[]) => MetadataRecord[] | ApiError,
): ControllerResult<ConfigResourceResult[]> {
  const records: MetadataRecord[] = [];
  const results: ConfigResourceResult[] = [];
  const seen = new Set<string>();
  for (const request of resources) {
    const key = `${request.resourceType}:${request.resourceName}`;
    const base = { resourceType: request.resourceType, resourceName: request.resourceName };
    if (seen.has(key)) {
      results.push({ ...base, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Duplicate resource.' });
      continue;
    }
    seen.add(key);
    const names = request.configs.map((config) => config.name);
    if (new Set(names).size !== names.length) {
      results.push({ ...base, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Error due to duplicate config keys' });
      continue;
    }
    const outcome = change({ type: request.resourceType, name: request.resourceName }, request.configs);
    if ('errorCode' in outcome) {
      results.push({ ...base, ...outcome });
      continue;
    }
    records.push(...outcome);
    results.push({ ...base, errorCode: ErrorCode.NONE, errorMessage: null });
  }
  return result(options.validateOnly ? [] : records, results);
}
