/**
 * Client quotas in the metadata image (Kafka's ClientQuotasImage), built by
 * replaying ClientQuotaRecord: per entity, the quota keys set for it.
 *
 * An entity is one or two components: `user` and/or `client-id`, or `ip`
 * alone; a component's name is null for the default entity (`--entity-default`).
 * Entities are kept by a canonical key so that the same entity written in
 * any order is one entry.
 */

export const ClientQuotaEntityType = {
  USER: 'user',
  CLIENT_ID: 'client-id',
  IP: 'ip',
} as const;

/**
 * The order components are listed in responses and snapshots: the order in
 * which Kafka's HashMap iterates these three keys, so describe and alter
 * answers list them as Kafka's do.
 */
export const ENTITY_TYPE_ORDER: readonly string[] = [ClientQuotaEntityType.CLIENT_ID, ClientQuotaEntityType.USER, ClientQuotaEntityType.IP];

/** Quota keys (Kafka's QuotaConfig). */
export const QuotaKey = {
  PRODUCER_BYTE_RATE: 'producer_byte_rate',
  CONSUMER_BYTE_RATE: 'consumer_byte_rate',
  REQUEST_PERCENTAGE: 'request_percentage',
  CONTROLLER_MUTATION_RATE: 'controller_mutation_rate',
  CONNECTION_CREATION_RATE: 'connection_creation_rate',
} as const;

export interface EntityComponent {
  entityType: string;
  /** null for the default entity. */
  entityName: string | null;
}

/** Entity type → name (null: the default); Kafka's ClientQuotaEntity. */
export type ClientQuotaEntity = ReadonlyMap<string, string | null>;

export interface ClientQuotaImage {
  entity: ClientQuotaEntity;
  /** Quota key → value; never empty in an image. */
  quotas: ReadonlyMap<string, number>;
}

export function javaStringHash(text: string): number {
  let hash = 0;
  for (let i = 0; i < text.length; i++) hash = (Math.imul(31, hash) + text.charCodeAt(i)) | 0;
  return hash;
}

/**
 * The order a Java HashMap of `capacity` buckets (default: the capacity a
 * `new HashMap<>(keys.length)` grows to) iterates string keys inserted in
 * the given order. Kafka keeps quota values in such maps, and its tools
 * print them in this order, so Spool answers and prints in it too.
 */
export function javaHashMapOrder(keys: readonly string[], capacity?: number): string[] {
  return javaHashOrder(keys, javaStringHash, capacity);
}

/** javaHashMapOrder for keys whose Java hashCode is `hashOf`. */
export function javaHashOrder<K>(keys: readonly K[], hashOf: (key: K) => number, capacity?: number): K[] {
  let buckets = capacity ?? 1;
  if (capacity === undefined) {
    while (buckets < keys.length) buckets *= 2;
    while (keys.length > Math.floor(buckets * 0.75)) buckets *= 2;
  }
  const bucketOf = (key: K) => {
    const hash = hashOf(key);
    return (hash ^ (hash >>> 16)) & (buckets - 1);
  };
  return [...keys].sort((a, b) => bucketOf(a) - bucketOf(b));
}

/** Kafka's ClientQuotaEntity.hashCode: its entries map's, the sum of each key's hash xor its value's (0 for null). */
export function javaEntityHash(components: readonly EntityComponent[]): number {
  let hash = 0;
  for (const { entityType, entityName } of components) hash = (hash + (javaStringHash(entityType) ^ (entityName === null ? 0 : javaStringHash(entityName)))) | 0;
  return hash;
}

/** Buckets of Kafka's ClientQuotaImage map (a default-sized HashMap) for the five quota keys. */
export const QUOTA_MAP_CAPACITY = 16;

/** A component list as an entity; a type given twice keeps its last name, as Kafka's request parsing does. */
export function entityOf(components: readonly EntityComponent[]): ClientQuotaEntity {
  const entity = new Map<string, string | null>();
  for (const { entityType, entityName } of components) entity.set(entityType, entityName);
  return entity;
}

/** An entity's components in Kafka's listing order (unknown types last, by name). */
export function componentsOf(entity: ClientQuotaEntity): EntityComponent[] {
  const rank = (type: string) => {
    const index = ENTITY_TYPE_ORDER.indexOf(type);
    return index === -1 ? ENTITY_TYPE_ORDER.length : index;
  };
  return [...entity]
    .sort(([a], [b]) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0))
    .map(([entityType, entityName]) => ({ entityType, entityName }));
}

/** The canonical key of an entity: equal for equal entities whatever their components' order. */
export function clientQuotaEntityKey(entity: ClientQuotaEntity): string {
  return JSON.stringify(componentsOf(entity).map((c) => [c.entityType, c.entityName]));
}

/** Kafka's ClientQuotaEntity.toString, for error messages: `ClientQuotaEntity(entries={client-id=c1, user=null})`. */
export function describeEntity(entity: ClientQuotaEntity): string {
  return `ClientQuotaEntity(entries={${componentsOf(entity).map((c) => `${c.entityType}=${c.entityName}`).join(', ')}})`;
}

/** Replays one ClientQuotaRecord onto a copy-on-write map of entities. */
export function applyClientQuota(
  quotas: Map<string, ClientQuotaImage>,
  record: { entity: readonly EntityComponent[]; key: string; value: number; remove: boolean },
): void {
  const entity = entityOf(record.entity);
  const id = clientQuotaEntityKey(entity);
  const next = new Map(quotas.get(id)?.quotas);
  if (record.remove) next.delete(record.key);
  else next.set(record.key, record.value);
  if (next.size === 0) quotas.delete(id);
  else quotas.set(id, { entity, quotas: next });
}

/**
 * A DescribeClientQuotas filter, validated (see 48-describe-client-quotas.ts):
 * components matched by name (null: the default entity), components that
 * only need the type present, and whether entities with other components
 * are left out.
 */
export interface ClientQuotaFilter {
  exact: ReadonlyMap<string, string | null>;
  ofType: ReadonlySet<string>;
  strict: boolean;
}

function matchesFilter(entity: ClientQuotaEntity, filter: ClientQuotaFilter): boolean {
  for (const [type, name] of filter.exact) if (!entity.has(type) || entity.get(type) !== name) return false;
  for (const type of filter.ofType) if (!entity.has(type)) return false;
  return !filter.strict || entity.size === filter.exact.size + filter.ofType.size;
}

/**
 * Kafka's ClientQuotasImage.matches: every entity carrying all the filter's
 * components; an empty filter matches everything unless strict, where it
 * matches nothing.
 */
export function matchClientQuotas(quotas: ReadonlyMap<string, ClientQuotaImage>, filter: ClientQuotaFilter): ClientQuotaImage[] {
  const empty = filter.exact.size === 0 && filter.ofType.size === 0;
  if (empty) return filter.strict ? [] : [...quotas.values()];
  return [...quotas.values()].filter((quota) => matchesFilter(quota.entity, filter));
}
