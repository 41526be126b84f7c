/**
 * `spool acls`: kafka-acls.sh. --add creates one ACL per principal,
 * operation and host for each resource named (--topic, --group, --cluster,
 * --transactional-id), or the convenience sets --producer (WRITE, DESCRIBE,
 * CREATE on topics; WRITE, DESCRIBE on transactional ids; IDEMPOTENT_WRITE
 * on the cluster with --idempotent) and --consumer (READ, DESCRIBE on
 * topics, READ on groups); --remove deletes them (every ACL of the resource
 * when no principal is given), after a y/n confirmation unless --force;
 * --list prints the ACLs of the resources named, or all, as kafka-acls.sh
 * prints them:
 *
 *   Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)`:
 *    	(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)
 *
 * --resource-pattern-type is literal (default), prefixed, and for
 * --list / --remove also any and match.
 */
import type { Command } from 'commander';
import { Admin } from '../client/admin.js';
import { KafkaError } from '../client/errors.js';
import {
  AclOperation,
  AclPermissionType,
  CLUSTER_NAME,
  PatternType,
  ResourceType,
  SUPPORTED_OPERATIONS,
  nameOf,
  type AclBindingFilter,
  type StandardAcl,
} from '../security/authorizer/acl.js';
import { CliError, DEFAULT_BOOTSTRAP_SERVER, collect, type CliIo } from './io.js';

interface AclsFlags {
  bootstrapServer: string;
  add?: boolean;
  remove?: boolean;
  list?: boolean;
  force?: boolean;
  topic: string[];
  group: string[];
  transactionalId: string[];
  cluster?: boolean;
  resourcePatternType: string;
  allowPrincipal: string[];
  denyPrincipal: string[];
  allowHost: string[];
  denyHost: string[];
  operation: string[];
  principal: string[];
  producer?: boolean;
  consumer?: boolean;
  idempotent?: boolean;
}

interface ResourceFilter {
  resourceType: number;
  resourceName: string;
  patternType: number;
}

type Entry = Pick<StandardAcl, 'principal' | 'host' | 'operation' | 'permissionType'>;

const NEWLINE = '\n';

export function registerAcls(program: Command, io: CliIo): void {
  program
    .command('acls')
    .description('Add, remove or list ACLs (like kafka-acls.sh)')
    .option('--bootstrap-server <server>', 'the broker to connect to', DEFAULT_BOOTSTRAP_SERVER)
    .option('--add', 'add ACLs')
    .option('--remove', 'remove ACLs')
    .option('--list', 'list ACLs')
    .option('--force', 'remove without asking')
    .option('--topic <topic>', 'a topic resource (repeatable)', collect, [])
    .option('--group <group>', 'a consumer group resource (repeatable)', collect, [])
    .option('--transactional-id <id>', 'a transactional id resource (repeatable)', collect, [])
    .option('--cluster', 'the cluster resource')
    .option('--resource-pattern-type <type>', 'literal, prefixed (and any, match for --list and --remove)', 'literal')
    .option('--allow-principal <principal>', 'principal (Type:name) allowed (repeatable)', collect, [])
    .option('--deny-principal <principal>', 'principal (Type:name) denied (repeatable)', collect, [])
    .option('--allow-host <host>', 'host allowed (default * with --allow-principal)', collect, [])
    .option('--deny-host <host>', 'host denied (default * with --deny-principal)', collect, [])
    .option('--operation <operation>', 'Read, Write, Create, Delete, Alter, Describe, ClusterAction, DescribeConfigs, AlterConfigs, IdempotentWrite, All (repeatable)', collect, [])
    .option('--principal <principal>', 'with --list: only this principal\'s ACLs (repeatable)', collect, [])
    .option('--producer', 'the ACLs a producer needs')
    .option('--consumer', 'the ACLs a consumer needs (with --group)')
    .option('--idempotent', 'with --producer: IDEMPOTENT_WRITE on the cluster')
    .action(async (flags: AclsFlags) => {
      const actions = [flags.add, flags.remove, flags.list].filter((a) => a === true).length;
      if (actions !== 1) throw new CliError('Command must include exactly one action: --list, --add, --remove.');
      const admin = new Admin({ bootstrapServers: flags.bootstrapServer, env: io.env, clientId: 'spool-acls' });
      try {
        if (flags.add === true) await addAcls(admin, flags, io);
        else if (flags.remove === true) await removeAcls(admin, flags, io);
        else await listAcls(admin, flags, io);
      } catch (error) {
        if (error instanceof KafkaError) throw new CliError(`Error while executing ACL command: ${error.detail}`);
        throw error;
      } finally {
        await admin.close();
      }
    });
}

function patternTypeOf(text: string): number {
  const code = PatternType[text.toUpperCase() as keyof typeof PatternType];
  if (code === undefined || code === PatternType.UNKNOWN) throw new CliError(`Invalid --resource-pattern-type ${text}: expected one of literal, prefixed, any, match`);
  return code;
}

/** Kafka's SecurityUtils.operation: "Read", "DescribeConfigs", "describe-configs" and "DESCRIBE_CONFIGS" alike. */
function operationOf(text: string): number {
  const key = text.trim().replace(/[-_]/g, '').toUpperCase();
  const entry = Object.entries(AclOperation).find(([name]) => name.replace(/_/g, '') === key);
  if (entry === undefined || entry[1] === AclOperation.UNKNOWN || entry[1] === AclOperation.ANY) throw new CliError(`Invalid operation ${text}`);
  return entry[1];
}

function principalOf(text: string): string {
  const principal = text.trim();
  if (!/^[^:]+:.+$/.test(principal)) throw new CliError(`Invalid principal ${principal}: expected a string in format principalType:principalName`);
  return principal;
}

function resourceFilters(flags: AclsFlags, options: { required: boolean }): ResourceFilter[] {
  const patternType = patternTypeOf(flags.resourcePatternType);
  const filters: ResourceFilter[] = [];
  for (const name of flags.topic) filters.push({ resourceType: ResourceType.TOPIC, resourceName: name.trim(), patternType });
  if (patternType === PatternType.LITERAL && (flags.cluster === true || flags.idempotent === true)) filters.push({ resourceType: ResourceType.CLUSTER, resourceName: CLUSTER_NAME, patternType });
  for (const name of flags.group) filters.push({ resourceType: ResourceType.GROUP, resourceName: name.trim(), patternType });
  for (const name of flags.transactionalId) filters.push({ resourceType: ResourceType.TRANSACTIONAL_ID, resourceName: name, patternType });
  if (filters.length === 0 && options.required) throw new CliError('You must provide at least one resource: --topic <topic> or --cluster or --group <group> or --transactional-id <id>');
  return filters;
}

function entries(flags: AclsFlags, operations: readonly number[]): Entry[] {
  const out: Entry[] = [];
  const add = (principals: string[], hosts: string[], permissionType: number) => {
    const hostList = hosts.length > 0 ? hosts.map((h) => h.trim()) : principals.length > 0 ? ['*'] : [];
    for (const principal of principals.map(principalOf)) for (const operation of operations) for (const host of hostList) out.push({ principal, host, operation, permissionType });
  };
  add(flags.allowPrincipal, flags.allowHost, AclPermissionType.ALLOW);
  add(flags.denyPrincipal, flags.denyHost, AclPermissionType.DENY);
  return out;
}

/** Each resource with the entries the command names for it (Kafka's getResourceFilterToAcls). */
function resourceEntries(flags: AclsFlags): [ResourceFilter, Entry[]][] {
  const filters = resourceFilters(flags, { required: true });
  const byResource = new Map<string, [ResourceFilter, Entry[]]>();
  const put = (filter: ResourceFilter, list: Entry[]) => {
    const key = JSON.stringify(filter);
    const existing = byResource.get(key);
    if (existing === undefined) byResource.set(key, [filter, list]);
    else existing[1].push(...list);
  };
  const { READ, WRITE, CREATE, DESCRIBE, IDEMPOTENT_WRITE, ALL } = AclOperation;
  if (flags.producer !== true && flags.consumer !== true) {
    const operations = flags.operation.length > 0 ? [...new Set(flags.operation.map(operationOf))] : [ALL];
    for (const filter of filters) put(filter, entries(flags, operations));
  }
  if (flags.producer === true) {
    for (const filter of filters) {
      if (filter.resourceType === ResourceType.TOPIC) put(filter, entries(flags, [WRITE, DESCRIBE, CREATE]));
      if (filter.resourceType === ResourceType.TRANSACTIONAL_ID) put(filter, entries(flags, [WRITE, DESCRIBE]));
      if (filter.resourceType === ResourceType.CLUSTER && flags.idempotent === true) put(filter, entries(flags, [IDEMPOTENT_WRITE]));
    }
  }
  if (flags.consumer === true) {
    for (const filter of filters) {
      if (filter.resourceType === ResourceType.TOPIC) put(filter, entries(flags, [READ, DESCRIBE]));
      if (filter.resourceType === ResourceType.GROUP) put(filter, entries(flags, [READ]));
    }
  }
  for (const [filter, list] of byResource.values()) {
    const supported = SUPPORTED_OPERATIONS[filter.resourceType] ?? [];
    const unsupported = list.filter((e) => e.operation !== ALL && !supported.includes(e.operation as never));
    if (unsupported.length > 0) {
      const names = supported.map((op) => operationName(op)).join(', ');
      throw new CliError(`ResourceType ${nameOf(ResourceType, filter.resourceType)} only supports operations ${names}`);
    }
  }
  return [...byResource.values()];
}

function operationName(operation: number): string {
  return nameOf(AclOperation, operation);
}

export function formatResource(filter: ResourceFilter): string {
  return `ResourcePattern(resourceType=${nameOf(ResourceType, filter.resourceType)}, name=${filter.resourceName}, patternType=${nameOf(PatternType, filter.patternType)})`;
}

export function formatEntry(entry: Entry): string {
  return `(principal=${entry.principal}, host=${entry.host}, operation=${operationName(entry.operation)}, permissionType=${nameOf(AclPermissionType, entry.permissionType)})`;
}

const block = (entryList: readonly Entry[]) => `${NEWLINE} ${entryList.map((e) => `\t${formatEntry(e)}`).join(NEWLINE)} ${NEWLINE}`;

async function addAcls(admin: Admin, flags: AclsFlags, io: CliIo): Promise<void> {
  const patternType = patternTypeOf(flags.resourcePatternType);
  if (patternType !== PatternType.LITERAL && patternType !== PatternType.PREFIXED) {
    throw new CliError(`A '--resource-pattern-type' value of '${nameOf(PatternType, patternType)}' is not valid when adding acls.`);
  }
  const toAdd = resourceEntries(flags);
  if (toAdd.some(([, list]) => list.length === 0)) throw new CliError('You must specify one of: --allow-principal, --deny-principal when trying to add ACLs.');
  for (const [resource, list] of toAdd) {
    io.stdout(`Adding ACLs for resource \`${formatResource(resource)}\`: ${block(list)}\n`);
    await admin.createAcls(list.map((entry) => ({ ...resource, ...entry })));
  }
}

async function removeAcls(admin: Admin, flags: AclsFlags, io: CliIo): Promise<void> {
  for (const [resource, list] of resourceEntries(flags)) {
    const question =
      list.length === 0
        ? `Are you sure you want to delete all ACLs for resource filter \`${formatFilter(resource)}\`? (y/n)`
        : `Are you sure you want to remove ACLs: ${block(list)} from resource filter \`${formatFilter(resource)}\`? (y/n)`;
    if (!(await confirm(flags, io, question))) continue;
    const any = { principal: null, host: null, operation: AclOperation.ANY, permissionType: AclPermissionType.ANY };
    const filters: AclBindingFilter[] = list.length === 0 ? [{ ...resource, ...any }] : list.map((entry) => ({ ...resource, ...entry }));
    await admin.deleteAcls(filters);
  }
}

function formatFilter(filter: ResourceFilter): string {
  return `ResourcePattern(resourceType=${nameOf(ResourceType, filter.resourceType)}, name=${filter.resourceName}, patternType=${nameOf(PatternType, filter.patternType)})`;
}

async function confirm(flags: AclsFlags, io: CliIo, question: string): Promise<boolean> {
  if (flags.force === true) return true;
  io.stdout(`${question}\n`);
  for await (const line of io.stdinLines()) return line.trim().toLowerCase() === 'y';
  return false;
}

async function listAcls(admin: Admin, flags: AclsFlags, io: CliIo): Promise<void> {
  const any = { principal: null, host: null, operation: AclOperation.ANY, permissionType: AclPermissionType.ANY };
  const filters = resourceFilters(flags, { required: false });
  const acls =
    filters.length === 0
      ? await admin.describeAcls({ resourceType: ResourceType.ANY, resourceName: null, patternType: PatternType.ANY, ...any })
      : (await Promise.all(filters.map((filter) => admin.describeAcls({ ...filter, ...any })))).flat();
  const byResource = new Map<string, [ResourceFilter, Entry[]]>();
  for (const acl of acls) {
    const resource = { resourceType: acl.resourceType, resourceName: acl.resourceName, patternType: acl.patternType };
    const key = JSON.stringify(resource);
    const slot = byResource.get(key) ?? [resource, []];
    byResource.set(key, slot);
    if (!slot[1].some((e) => formatEntry(e) === formatEntry(acl))) slot[1].push(acl);
  }
  const print = (principal: string | null) => {
    for (const [resource, list] of byResource.values()) {
      const shown = principal === null ? list : list.filter((e) => e.principal === principal);
      if (shown.length > 0) io.stdout(`Current ACLs for resource \`${formatResource(resource)}\`: ${block(shown)}\n`);
    }
  };
  if (flags.principal.length === 0) return print(null);
  for (const principal of flags.principal.map(principalOf)) {
    io.stdout(`ACLs for principal \`${principal}\`\n`);
    print(principal);
  }
}
