/**
 * `spool share-groups`: kafka-share-groups.sh (Kafka 4.4's ShareGroupCommand,
 * KIP-932) on Spool's admin client. Same flags, same checks in the same
 * order, same output, column for column:
 * - --list [--state [s,...]]
 * - --describe (--group g... | --all-groups) [--offsets | --members | --state] [--verbose]
 * - --delete (--group g... | --all-groups): only Empty share groups
 * - --reset-offsets --group g (--topic t[:p,...]... | --all-topics | --from-file f)
 *   with one of --to-earliest, --to-latest, --to-offset, --to-datetime,
 *   --to-current, --from-file, and exactly one of --dry-run / --execute;
 *   --export prints the plan as CSV. Refused unless the group is Empty or Dead.
 * - --delete-offsets --group g --topic t...: whole topics
 * Kafka 4.4 has no --by-duration or --shift-by for share groups, so neither
 * has this. As in Kafka, usage errors exit 1 with the message on stderr, and
 * failures of the command itself print "Error: ..." on stdout and exit 0.
 * Rows Kafka prints in Java HashMap order (listed groups, reset plans,
 * failed deletions) come in that same order here.
 *
 * --timeout (default 30000, as Kafka) becomes the admin client's
 * request.timeout.ms; --command-config takes the client properties Spool's
 * admin client has, and refuses any other.
 */
import type { Command } from 'commander';
import { Admin, type AdminOptions, type GroupListing, type ListedSharePartition, type ShareGroupDescription } from '../client/admin.js';
import type { TopicPartition } from '../client/cluster.js';
import { KafkaError } from '../client/errors.js';
import { javaHashOrder, javaStringHash, javaTopicPartitionHash } from '../client/group-sticky-assignor.js';
import { SHARE_GROUP_STATES } from '../client/share-group-admin.js';
import { parseProperties } from '../common/config.js';
import { ErrorCode } from '../protocol/errors.js';
import { parseTopicPartitionKey, topicPartitionKey } from '../protocol/topic-partition.js';
import {
  checkPartitionsValid,
  clampToLog,
  formatResetPlan,
  javaException,
  kafkaMessage,
  listedOffsets,
  offsetsAtTime,
  parseDateTime,
  parseLong,
  parseResetPlan,
  partitionsToReset,
  ToolError,
} from './consumer-groups.js';
import { CliError, collect, DEFAULT_BOOTSTRAP_SERVER, type CliIo } from './io.js';

export interface ShareGroupsFlags {
  bootstrapServer: string;
  commandConfig?: string;
  group: string[];
  topic: string[];
  allTopics?: boolean;
  list?: boolean;
  describe?: boolean;
  allGroups?: boolean;
  delete?: boolean;
  timeout: string;
  resetOffsets?: boolean;
  deleteOffsets?: boolean;
  dryRun?: boolean;
  execute?: boolean;
  export?: boolean;
  toOffset?: string;
  fromFile?: string;
  toDatetime?: string;
  toEarliest?: boolean;
  toLatest?: boolean;
  toCurrent?: boolean;
  members?: boolean;
  offsets?: boolean;
  state?: string | boolean;
  verbose?: boolean;
}

const MISSING = '-';

/** Kafka's ShareGroupCommand.ShareGroupService default for --timeout. */
const SHARE_GROUPS_TIMEOUT_MS_DEFAULT = '30000';

/** Java's %-Ns: left-aligned in N columns, never cut. */
const pad = (text: string | number, width: number): string => String(text).padEnd(width);

const ACTION_FLAGS = '--list, --describe, --delete, --reset-offsets, --delete-offsets';
const SCENARIOS = ['toOffset', 'toDatetime', 'toEarliest', 'toLatest', 'toCurrent', 'fromFile'] as const;
const SCENARIO_NAMES: Record<(typeof SCENARIOS)[number], string> = {
  toOffset: 'to-offset', toDatetime: 'to-datetime', toEarliest: 'to-earliest', toLatest: 'to-latest', toCurrent: 'to-current', fromFile: 'from-file',
};
const RESET_SCOPES = ['topic', 'allTopics', 'fromFile'] as const;
const RESET_SCOPE_NAMES: Record<(typeof RESET_SCOPES)[number], string> = { topic: 'topic', allTopics: 'all-topics', fromFile: 'from-file' };

export function registerShareGroups(program: Command, io: CliIo): void {
  program
    .command('share-groups')
    .description('List, describe, delete share groups and reset or delete their offsets (like kafka-share-groups.sh)')
    .option('--bootstrap-server <server>', 'the server(s) to connect to', DEFAULT_BOOTSTRAP_SERVER)
    .option('--command-config <file>', 'a properties file of admin client settings')
    .option('--group <group>', 'the share group id (repeatable)', collect, [])
    .option('--topic <topic>', 'the topic whose offsets to delete or reset; for a reset, partitions as topic:0,1,2 (repeatable)', collect, [])
    .option('--all-topics', 'with --reset-offsets: every topic the group has offsets for')
    .option('--list', 'list all share groups')
    .option('--describe', 'describe share groups, their members and offsets')
    .option('--all-groups', 'apply to all share groups')
    .option('--delete', 'delete share groups')
    .option('--timeout <ms>', 'timeout for the admin calls', SHARE_GROUPS_TIMEOUT_MS_DEFAULT)
    .option('--reset-offsets', 'reset the offsets of an inactive share group')
    .option('--delete-offsets', 'delete offsets of a share group, for whole topics')
    .option('--dry-run', 'with --reset-offsets: only show the plan')
    .option('--execute', 'with --reset-offsets: reset the offsets')
    .option('--export', 'with --reset-offsets: print the plan as CSV')
    .option('--to-offset <offset>', 'reset to this offset')
    .option('--from-file <path>', 'reset to the offsets in this CSV file')
    .option('--to-datetime <datetime>', "reset to the offsets at this time, 'YYYY-MM-DDThh:mm:ss.sss'")
    .option('--to-earliest', 'reset to the earliest offset')
    .option('--to-latest', 'reset to the latest offset')
    .option('--to-current', 'reset to the current offset')
    .option('--members', 'with --describe: the members')
    .option('--offsets', 'with --describe: partitions with start offset and lag (the default)')
    .option('--state [states]', 'with --describe: the group state; with --list: show states, or only these (comma-separated: Empty, Stable, Dead)')
    .option('--verbose', 'with --describe: more columns')
    .action(async (flags: ShareGroupsFlags) => {
      checkArgs(flags);
      const admin = new Admin(await adminOptions(flags, io));
      try {
        await runAction(admin, flags, io);
      } catch (error) {
        if (error instanceof CliError || !(error instanceof KafkaError)) throw error;
        printError(io, `Executing share group command failed due to ${describeFailure(error)}`);
        io.stderr(`${javaException(error)}\n`);
      } finally {
        await admin.close();
      }
    });
}

function printError(io: CliIo, message: string): void {
  io.stdout(`\nError: ${message}\n`);
}

/** What Kafka's catch-all prints: an admin future's failure as the exception (class: message), the tool's own as its message. */
function describeFailure(error: KafkaError): string {
  return error instanceof ToolError ? error.detail : javaException(error);
}

type AdminSetter = (options: AdminOptions, value: string) => void;

function integer(name: string, value: string): number {
  if (!/^\d+$/.test(value.trim())) throw new CliError(`Invalid value ${value} for configuration ${name}: Not a number`);
  return Number(value.trim());
}

const ADMIN_PROPERTIES: Record<string, AdminSetter> = {
  'client.id': (o, v) => { o.clientId = v; },
  'request.timeout.ms': (o, v) => { o.requestTimeoutMs = integer('request.timeout.ms', v); },
  'retry.backoff.ms': (o, v) => { o.retryBackoffMs = integer('retry.backoff.ms', v); },
  'retry.backoff.max.ms': (o, v) => { o.retryBackoffMaxMs = integer('retry.backoff.max.ms', v); },
  'metadata.max.age.ms': (o, v) => { o.metadataMaxAgeMs = integer('metadata.max.age.ms', v); },
};

async function adminOptions(flags: ShareGroupsFlags, io: CliIo): Promise<AdminOptions> {
  const options: AdminOptions = {
    bootstrapServers: flags.bootstrapServer,
    env: io.env,
    clientId: 'spool-share-groups',
    requestTimeoutMs: parseLong(flags.timeout, 'timeout'),
  };
  if (flags.commandConfig === undefined) return options;
  if ((await io.env.fs.stat(flags.commandConfig)) === null) throw new CliError(`Properties file ${flags.commandConfig} does not exists!`);
  const properties = parseProperties((await io.env.fs.readFile(flags.commandConfig)).toString('utf8'));
  for (const [name, value] of properties) {
    const setter = ADMIN_PROPERTIES[name];
    if (setter === undefined) throw new CliError(`Unsupported property ${name} in ${flags.commandConfig}: Spool's admin client takes ${Object.keys(ADMIN_PROPERTIES).join(', ')}`);
    setter(options, value);
  }
  return options;
}

// ---- argument checks ----

const has = (value: string | boolean | string[] | undefined): boolean => (Array.isArray(value) ? value.length > 0 : value !== undefined && value !== false);

/**
 * Kafka's option parser refuses --members, --offsets, --verbose without
 * --describe and --state without --describe or --list (joptsimple's
 * availableIf), before any other check, naming them in its HashMap's order.
 */
function checkAvailable(flags: ShareGroupsFlags): void {
  const rules: [string, boolean, boolean][] = [
    ['members', has(flags.members), has(flags.describe)],
    ['offsets', has(flags.offsets), has(flags.describe)],
    ['state', has(flags.state), has(flags.describe) || has(flags.list)],
    ['verbose', has(flags.verbose), has(flags.describe)],
  ];
  const listHash = (name: string): number => (31 + javaStringHash(name)) | 0;
  const unavailable = javaHashOrder(rules.filter(([, used, allowed]) => used && !allowed).map(([name]) => name), listHash);
  if (unavailable.length > 0) throw new CliError(`Option(s) [${unavailable.join(', ')}] are unavailable given other options on the command line`);
}

/** CommandLineUtils.checkInvalidArgs: `used` with the first of `invalid` present. */
function checkInvalid(used: [string, boolean], invalid: readonly [string, boolean][]): void {
  if (!used[1]) return;
  const clash = invalid.find(([, present]) => present);
  if (clash !== undefined) throw new CliError(`Option "[${used[0]}]" can't be used with option "[${clash[0]}]"`);
}

/** Kafka's ShareGroupCommandOptions.checkArgs, then its one-action rule, in their order and words. */
export function checkArgs(flags: ShareGroupsFlags): void {
  checkAvailable(flags);
  const hasGroup = has(flags.group);
  const hasTopic = has(flags.topic);
  if (has(flags.describe)) {
    if (!hasGroup && !has(flags.allGroups)) throw new CliError('Option [describe] takes one of these options: [all-groups], [group]');
    if ([flags.members, flags.offsets, flags.state].filter(has).length > 1) throw new CliError('Option [describe] takes at most one of these options: [members], [offsets], [state]');
    if (typeof flags.state === 'string') throw new CliError('Option [describe] does not take a value for [state]');
  }
  if (has(flags.delete)) {
    if (!hasGroup && !has(flags.allGroups)) throw new CliError('Option [delete] takes the options [group] or [all-groups].');
    if (hasGroup && has(flags.allGroups)) throw new CliError('Option [delete] takes either [group] or [all-groups], not both.');
    if (has(flags.allTopics) || hasTopic) throw new CliError('Option [delete] does not take the options [topic] or [all-topics].');
  }
  if (has(flags.deleteOffsets) && (!hasGroup || !hasTopic)) throw new CliError('Option [delete-offsets] takes the following options: [group], [topic]');
  if (has(flags.resetOffsets)) checkResetArgs(flags);
  checkInvalid(['group', hasGroup], [['all-groups', has(flags.allGroups)]]);
  checkInvalid(['group', hasGroup], [['list', has(flags.list)]]);
  checkInvalid(['topic', hasTopic], [['list', has(flags.list)], ['describe', has(flags.describe)], ['delete', has(flags.delete)]]);
  const actions = [flags.list, flags.describe, flags.delete, flags.resetOffsets, flags.deleteOffsets].filter(has);
  if (actions.length !== 1) throw new CliError(`Command must include exactly one action: ${ACTION_FLAGS}.`);
}

function checkResetArgs(flags: ShareGroupsFlags): void {
  if (has(flags.dryRun) && has(flags.execute)) throw new CliError('Option [reset-offsets] only accepts one of [execute] and [dry-run]');
  if (!has(flags.dryRun) && !has(flags.execute)) throw new CliError('Option [reset-offsets] takes the option: [execute] or [dry-run]');
  if (!has(flags.group)) throw new CliError('Option [reset-offsets] takes the option: [group]');
  const scopes = RESET_SCOPES.map((s): [string, boolean] => [RESET_SCOPE_NAMES[s], has(flags[s])]);
  if (!scopes.some(([, present]) => present)) throw new CliError('Option [reset-offsets] takes one of these options: [all-topics], [from-file], [topic]');
  for (const scope of scopes) checkInvalid(scope, scopes.filter((s) => s !== scope));
  const scenarios = SCENARIOS.map((s): [string, boolean] => [SCENARIO_NAMES[s], has(flags[s])]);
  if (!scenarios.some(([, present]) => present)) {
    throw new CliError('Option [reset-offsets] takes one of these options: [from-file], [to-current], [to-datetime], [to-earliest], [to-latest], [to-offset]');
  }
  for (const scenario of scenarios) checkInvalid(scenario, scenarios.filter((s) => s !== scenario));
}

async function runAction(admin: Admin, flags: ShareGroupsFlags, io: CliIo): Promise<void> {
  if (has(flags.list)) return listGroups(admin, flags, io);
  if (has(flags.describe)) return describeGroups(admin, flags, io);
  if (has(flags.delete)) return deleteGroups(admin, flags, io);
  if (has(flags.resetOffsets)) return resetOffsets(admin, flags, io);
  return deleteOffsets(admin, flags, io);
}

// ---- --list ----

/** Kafka's groupStatesFromString: comma-separated, any case, only share-group states. */
export function parseShareGroupStates(value: string): string[] {
  const states = value.split(',').map((s) => SHARE_GROUP_STATES.find((k) => k.toLowerCase() === s.trim().toLowerCase()));
  if (states.some((s) => s === undefined)) throw new CliError(`Invalid state list '${value}'. Valid states are: ${SHARE_GROUP_STATES.join(', ')}`);
  return [...new Set(states as string[])];
}

/**
 * Share groups in the order Kafka's admin lists them (collected in a
 * HashMap keyed by group id). Kafka's tool rethrows a failure to list all
 * share groups unwrapped (bare message), one to list some states wrapped.
 */
async function listedGroups(admin: Admin, states: readonly string[] = []): Promise<GroupListing[]> {
  const listed = states.length > 0 ? await admin.listShareGroups({ states }) : await admin.listShareGroups().catch((error: unknown) => { throw bare(error); });
  return javaHashOrder(listed, (g) => javaStringHash(g.groupId));
}

async function listGroups(admin: Admin, flags: ShareGroupsFlags, io: CliIo): Promise<void> {
  if (flags.state === undefined) {
    for (const group of await listedGroups(admin)) io.stdout(`${group.groupId}\n`);
    return;
  }
  const states = typeof flags.state === 'string' && flags.state !== '' ? parseShareGroupStates(flags.state) : [];
  io.stdout(formatShareGroupList(await listedGroups(admin, states)));
}

/** Kafka's printGroupInfo: GROUP padded to the longest id (at least 15), then STATE. */
export function formatShareGroupList(groups: readonly Pick<GroupListing, 'groupId' | 'groupState'>[]): string {
  const width = Math.max(15, ...groups.map((g) => g.groupId.length));
  const line = (id: string, state: string): string => `${pad(id, width)} ${state}\n`;
  return line('GROUP', 'STATE') + groups.map((g) => line(g.groupId, g.groupState ?? 'Unknown')).join('');
}

// ---- --describe ----

const byGroupId = (a: ShareGroupDescription, b: ShareGroupDescription): number => (a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0);

/** Kafka's maybePrintEmptyGroupState: the notice for a Dead or Empty group; true when rows follow. */
function noteState(io: CliIo, groupId: string, state: string, rows: number): boolean {
  if (state === 'Dead') printError(io, `Share group '${groupId}' does not exist.`);
  else if (state === 'Empty') io.stderr(`\nShare group '${groupId}' has no active members.\n`);
  return state !== 'Dead' && rows > 0;
}

async function describeGroups(admin: Admin, flags: ShareGroupsFlags, io: CliIo): Promise<void> {
  const groupIds = has(flags.allGroups) ? (await listedGroups(admin)).map((g) => g.groupId) : flags.group;
  const descriptions = (await admin.describeShareGroups([...new Set(groupIds)])).sort(byGroupId);
  const verbose = has(flags.verbose);
  if (has(flags.members)) {
    for (const d of descriptions) if (noteState(io, d.groupId, d.groupState, d.members.length)) io.stdout(formatShareMembers(d, verbose));
    return;
  }
  if (has(flags.state)) {
    for (const d of descriptions) {
      noteState(io, d.groupId, d.groupState, 1);
      io.stdout(formatShareGroupState(d, verbose));
    }
    return;
  }
  const offsets = new Map<string, ListedSharePartition[]>();
  for (const d of descriptions) {
    offsets.set(d.groupId, await admin.listShareGroupOffsets(d.groupId).catch((error: unknown) => { throw bare(error); }));
  }
  for (const d of descriptions) io.stdout(formatShareOffsets(d.groupId, offsets.get(d.groupId)!, verbose));
}

/** A failure Kafka's tool rethrows unwrapped from the admin future, so it prints with its bare message. */
function bare(error: unknown): unknown {
  return error instanceof KafkaError && !(error instanceof ToolError) ? new ToolError(error.code, kafkaMessage(error)) : error;
}

/** Kafka's printOffsets for one group: START-OFFSET and LAG per partition (LEADER-EPOCH too when verbose). */
export function formatShareOffsets(groupId: string, partitions: readonly ListedSharePartition[], verbose: boolean): string {
  if (partitions.length === 0) return `\nShare group '${groupId}' has no offset information.\n`;
  const groupWidth = Math.max(15, groupId.length);
  const topicWidth = Math.max(15, ...partitions.map((p) => p.topic.length));
  const show = (value: number | null | undefined): string => (value === null || value === undefined ? MISSING : String(value));
  const line = (group: string, topic: string, partition: string, epoch: string, offset: string, lag: string): string =>
    `\n${pad(group, groupWidth)} ${pad(topic, topicWidth)} ${pad(partition, 10)} ${verbose ? `${pad(epoch, 13)} ` : ''}${pad(offset, 13)} ${lag}`;
  let out = line('GROUP', 'TOPIC', 'PARTITION', 'LEADER-EPOCH', 'START-OFFSET', 'LAG');
  for (const p of sortedPartitions(partitions)) {
    out += line(groupId, p.topic, String(p.partition), show(p.offsetInfo?.leaderEpoch), show(p.offsetInfo?.startOffset), show(p.offsetInfo?.lag));
  }
  return `${out}\n`;
}

function sortedPartitions<T extends TopicPartition>(partitions: readonly T[]): T[] {
  return [...partitions].sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition));
}

/** Kafka's printStates for one group. */
export function formatShareGroupState(description: ShareGroupDescription, verbose: boolean): string {
  const coordinator = `${description.coordinator.host}:${description.coordinator.port}  (${description.coordinator.nodeId})`;
  const groupWidth = Math.max(15, description.groupId.length);
  const coordinatorWidth = Math.max(25, coordinator.length);
  const line = (group: string, coord: string, state: string, groupEpoch: string, assignmentEpoch: string, members: string): string => verbose
    ? `\n${pad(group, groupWidth)} ${pad(coord, coordinatorWidth)} ${pad(state, 15)} ${pad(groupEpoch, 12)} ${pad(assignmentEpoch, 17)} ${members}`
    : `\n${pad(group, groupWidth)} ${pad(coord, coordinatorWidth)} ${pad(state, 15)} ${members}`;
  const header = line('GROUP', 'COORDINATOR (ID)', 'STATE', 'GROUP-EPOCH', 'ASSIGNMENT-EPOCH', '#MEMBERS');
  const values = line(description.groupId, coordinator, description.groupState, String(description.groupEpoch), String(description.targetAssignmentEpoch), String(description.members.length));
  return `${header}${values}\n`;
}

/** Kafka's getAssignmentString: topic:p,p;topic2:p, topics and partitions sorted; empty for no partitions. */
function assignmentString(tps: readonly TopicPartition[]): string {
  const byTopic = new Map<string, number[]>();
  for (const tp of tps) byTopic.set(tp.topic, [...(byTopic.get(tp.topic) ?? []), tp.partition]);
  return [...byTopic].map(([topic, ps]) => `${topic}:${[...ps].sort((a, b) => a - b).join(',')}`).sort().join(';');
}

/** Kafka's printMembers for one group (members sorted by id). */
export function formatShareMembers(description: ShareGroupDescription, verbose: boolean): string {
  const members = [...description.members].sort((a, b) => (a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0));
  const groupWidth = Math.max(15, description.groupId.length);
  const consumerWidth = Math.max(15, ...members.map((m) => m.memberId.length));
  const hostWidth = Math.max(15, ...members.map((m) => m.host.length));
  const clientWidth = Math.max(15, ...members.map((m) => m.clientId.length));
  const line = (cells: { group: string; consumer: string; host: string; client: string; count: string; epoch: string; assignment: string }): string =>
    `\n${pad(cells.group, groupWidth)} ${pad(cells.consumer, consumerWidth)} ${pad(cells.host, hostWidth)} ${pad(cells.client, clientWidth)} ${pad(cells.count, 12)} ${verbose ? `${pad(cells.epoch, 13)} ` : ''}${cells.assignment}`;
  let out = line({ group: 'GROUP', consumer: 'CONSUMER-ID', host: 'HOST', client: 'CLIENT-ID', count: '#PARTITIONS', epoch: 'MEMBER-EPOCH', assignment: 'ASSIGNMENT' });
  for (const m of members) {
    const partitions = new Set(m.assignment.map((tp) => topicPartitionKey(tp))).size;
    out += line({ group: description.groupId, consumer: m.memberId, host: m.host, client: m.clientId, count: String(partitions), epoch: String(m.memberEpoch), assignment: assignmentString(m.assignment) });
  }
  return `${out}\n`;
}

// ---- --delete ----

/** Kafka's deleteShareGroups: groups that are not share groups, Dead or not Empty fail before any DeleteGroups. */
async function deleteGroups(admin: Admin, flags: ShareGroupsFlags, io: CliIo): Promise<void> {
  const listings = await listedGroups(admin);
  const groupIds = [...new Set(has(flags.allGroups) ? listings.map((g) => g.groupId) : flags.group)];
  const failed = new Map<string, string>();
  for (const groupId of groupIds) {
    const listing = listings.find((g) => g.groupId === groupId);
    const state = listing?.groupState?.toLowerCase() ?? null;
    if (listing === undefined) failed.set(groupId, `org.apache.kafka.common.errors.GroupIdNotFoundException: Group '${groupId}' is not a share group.`);
    else if (state === 'dead') failed.set(groupId, `java.lang.IllegalStateException: Share group '${groupId}' group state is DEAD.`);
    else if (state !== null && state !== 'empty') failed.set(groupId, `org.apache.kafka.common.errors.GroupNotEmptyException: Share group '${groupId}' is not EMPTY.`);
  }
  const toDelete = groupIds.filter((g) => !failed.has(g));
  const results = toDelete.length === 0 ? new Map<string, KafkaError | null>() : await admin.deleteShareGroups(toDelete);
  const succeeded: string[] = [];
  for (const groupId of toDelete) {
    const error = results.get(groupId) ?? null;
    if (error === null) succeeded.push(groupId);
    else failed.set(groupId, javaException(error));
  }
  // Kafka copies the refusals into a new HashMap (sized for them), then adds the failed deletions.
  const refused = javaHashOrder([...failed.keys()].filter((g) => !toDelete.includes(g)), javaStringHash);
  const notDeleted = javaHashOrder(toDelete.filter((g) => failed.has(g)), javaStringHash);
  const capacity = javaCopiedTableSize(refused.length, notDeleted.length);
  const failedOrder = javaHashOrder([...refused, ...notDeleted], javaStringHash, capacity);
  io.stdout(formatDeleteOutcome(javaHashOrder(succeeded, javaStringHash), new Map(failedOrder.map((g) => [g, failed.get(g)!]))));
}

/**
 * The table size of Java 17's `new HashMap<>(m)` for a map of `size`
 * entries (room for size / 0.75 + 1, a power of two; 16 when m is empty),
 * after `more` puts (doubled past 0.75 load). Java 19+ sizes the copy for
 * ceil(size / 0.75) instead, which differs when that is a whole number.
 */
function javaCopiedTableSize(size: number, more: number): number {
  let capacity = 16;
  if (size > 0) {
    const wanted = Math.floor(size / 0.75 + 1);
    capacity = 1;
    while (capacity < wanted) capacity *= 2;
  }
  while (size + more > capacity * 0.75) capacity *= 2;
  return capacity;
}

/** Kafka's report of a --delete: every group deleted, or the failures (with their exceptions) and then the successes. */
export function formatDeleteOutcome(succeeded: readonly string[], failed: ReadonlyMap<string, string>): string {
  const quoted = (ids: readonly string[]): string => ids.map((g) => `'${g}'`).join(', ');
  if (failed.size === 0) return `Deletion of requested share groups (${quoted(succeeded)}) was successful.\n`;
  let out = '\nError: Deletion of some share groups failed:\n';
  for (const [groupId, error] of failed) out += `* Group '${groupId}' could not be deleted due to: ${error}\n`;
  if (succeeded.length > 0) out += `\nThese share groups were deleted successfully: ${quoted(succeeded)}\n`;
  return out;
}

// ---- --delete-offsets ----

/** One topic's outcome: null when deleted, else what Kafka would print (its message) and the error. */
type TopicOutcome = { message: string; error: KafkaError | null } | null;

async function deleteOffsets(admin: Admin, flags: ShareGroupsFlags, io: CliIo): Promise<void> {
  const groupId = flags.group[0]!;
  const topics = javaHashOrder([...new Set(flags.topic)], javaStringHash);
  // As Kafka's tool, a failed call (a timeout, say) is the request's outcome, reported like a group-level error.
  const deleted = await admin.deleteShareGroupOffsets(groupId, topics).catch((error: unknown) => {
    if (!(error instanceof KafkaError)) throw error;
    return { error, topics: new Map<string, KafkaError | null>() };
  });
  const outcomes = new Map<string, TopicOutcome>();
  for (const topic of topics) {
    if (deleted.error !== null) outcomes.set(topic, { message: kafkaMessage(deleted.error), error: deleted.error });
    else if (!deleted.topics.has(topic)) outcomes.set(topic, { message: `Offset deletion result for topic "${topic}" was not included in the response`, error: null });
    else {
      const error = deleted.topics.get(topic)!;
      outcomes.set(topic, error === null ? null : { message: kafkaMessage(error), error });
    }
  }
  // The request's outcome is the group's error, else the first failed topic's (in the order Kafka's HashSet holds them).
  const topLevel = deleted.error !== null ? outcomes.get(topics[0]!) ?? null : topics.map((t) => outcomes.get(t) ?? null).find((o) => o !== null) ?? null;
  io.stdout(formatDeleteOffsetsOutcome(topLevel, outcomes));
}

const REPORTED_AS_MESSAGE = new Set<number>([ErrorCode.INVALID_GROUP_ID, ErrorCode.GROUP_ID_NOT_FOUND, ErrorCode.GROUP_AUTHORIZATION_FAILED, ErrorCode.NON_EMPTY_GROUP]);
const REPORTED_IN_ROWS = new Set<number>([ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);

/** Kafka's deleteOffsets report: the top-level error (if any), then TOPIC / STATUS rows sorted by topic. */
export function formatDeleteOffsetsOutcome(topLevel: TopicOutcome, outcomes: ReadonlyMap<string, TopicOutcome>): string {
  let out = '';
  if (topLevel !== null) {
    if (topLevel.error !== null && REPORTED_AS_MESSAGE.has(topLevel.error.code)) out += `\nError: ${topLevel.message}\n`;
    else if (topLevel.error === null || !REPORTED_IN_ROWS.has(topLevel.error.code)) {
      const exception = topLevel.error === null ? `java.lang.IllegalArgumentException: ${topLevel.message}` : javaException(topLevel.error);
      out += `\nError: Encounter some unknown error: ${exception}\n`;
    }
  }
  if (outcomes.size > 0) {
    const width = Math.max(15, ...[...outcomes.keys()].map((t) => t.length));
    out += `\n${pad('TOPIC', width)} STATUS`;
    for (const topic of [...outcomes.keys()].sort()) {
      const outcome = outcomes.get(topic) ?? null;
      out += `\n${pad(topic, width)} ${outcome === null ? 'Successful' : `Error: ${outcome.message}`}`;
    }
  }
  return `${out}\n`;
}

// ---- --reset-offsets ----

type ResetPlan = Map<string, number>;

/** Kafka's resetOffsets: only an Empty or Dead group, or one that does not exist yet (its offsets can be set before it starts). */
async function resetOffsets(admin: Admin, flags: ShareGroupsFlags, io: CliIo): Promise<void> {
  const groupId = flags.group[0]!;
  let state: string;
  try {
    [{ groupState: state }] = await admin.describeShareGroups([groupId]) as [ShareGroupDescription];
  } catch (error) {
    if (!(error instanceof KafkaError)) throw error;
    if (error.code !== ErrorCode.GROUP_ID_NOT_FOUND) throw new CliError(kafkaMessage(error));
    state = 'Dead';
  }
  if (state !== 'Empty' && state !== 'Dead') throw new CliError(`Share group '${groupId}' is not empty.`);
  const plan = await resetInactiveGroup(admin, flags, io, groupId);
  const rows = javaHashOrder([...plan.keys()].map(parseTopicPartitionKey), javaTopicPartitionHash).map((tp) => ({ ...tp, offset: plan.get(topicPartitionKey(tp))! }));
  if (has(flags.export)) {
    io.stdout(`${rows.map((r) => `${r.topic},${r.partition},${r.offset}\n`).join('')}\n`);
    return;
  }
  io.stdout(formatResetPlan(rows.length === 0 ? [] : [{ groupId, rows }]));
}

async function resetInactiveGroup(admin: Admin, flags: ShareGroupsFlags, io: CliIo, groupId: string): Promise<ResetPlan> {
  let current: ListedSharePartition[] | null = null;
  const currentOffsets = async (): Promise<ListedSharePartition[]> => {
    current ??= await admin.listShareGroupOffsets(groupId).catch((error: unknown) => { throw bare(error); });
    return current;
  };
  const tps = has(flags.topic) ? await partitionsToReset(admin, flags.topic) : (await currentOffsets()).map((p) => ({ topic: p.topic, partition: p.partition }));
  await checkPartitionsValid(admin, tps);
  const plan = await prepareReset(admin, flags, io, { groupId, tps, currentOffsets });
  if (has(flags.execute) && !has(flags.dryRun)) await applyReset(admin, groupId, plan);
  return plan;
}

/** Kafka's scenarios, in its order of precedence. */
async function prepareReset(
  admin: Admin,
  flags: ShareGroupsFlags,
  io: CliIo,
  scope: { groupId: string; tps: readonly TopicPartition[]; currentOffsets: () => Promise<ListedSharePartition[]> },
): Promise<ResetPlan> {
  const { tps } = scope;
  if (flags.toOffset !== undefined) {
    const offset = parseLong(flags.toOffset, 'to-offset');
    return clampToLog(admin, io, new Map(tps.map((tp) => [topicPartitionKey(tp), offset])));
  }
  if (has(flags.toEarliest)) return listedOffsets(admin, tps, 'earliest');
  if (has(flags.toLatest)) return listedOffsets(admin, tps, 'latest');
  if (flags.toDatetime !== undefined) return offsetsAtTime(admin, io, tps, parseDateTime(flags.toDatetime));
  if (flags.fromFile !== undefined) {
    const plans = parseResetPlan((await io.env.fs.readFile(flags.fromFile)).toString('utf8'), flags.group);
    const plan = plans.get(scope.groupId);
    if (plan === undefined) {
      printError(io, `No reset plan for group ${scope.groupId} found.`);
      return new Map();
    }
    return clampToLog(admin, io, plan);
  }
  if (!has(flags.toCurrent)) {
    throw new CliError(`Option '[reset-offsets]' requires one of the following scenarios: [${SCENARIOS.map((s) => `[${SCENARIO_NAMES[s]}]`).join(', ')}]`);
  }
  // --to-current: the start offset where the group has one, else the log end.
  const starts = new Map((await scope.currentOffsets()).filter((p) => p.offsetInfo !== null).map((p) => [topicPartitionKey(p), p.offsetInfo!.startOffset]));
  const plan: ResetPlan = new Map();
  const without = tps.filter((tp) => !starts.has(topicPartitionKey(tp)));
  for (const tp of tps) if (starts.has(topicPartitionKey(tp))) plan.set(topicPartitionKey(tp), starts.get(topicPartitionKey(tp))!);
  for (const [key, offset] of await listedOffsets(admin, without, 'latest')) plan.set(key, offset);
  return plan;
}

/** AlterShareGroupOffsets with the plan; as Kafka's result.all(), the first failure names every failed partition. */
async function applyReset(admin: Admin, groupId: string, plan: ResetPlan): Promise<void> {
  if (plan.size === 0) return;
  // In the order Kafka's admin builds the request from the plan (a HashMap).
  const partitions = javaHashOrder([...plan.keys()].map(parseTopicPartitionKey), javaTopicPartitionHash);
  const offsets = partitions.map((tp) => ({ ...tp, startOffset: plan.get(topicPartitionKey(tp))! }));
  const results = await admin.alterShareGroupOffsets(groupId, offsets).catch((error: unknown) => { throw bare(error); });
  const failures = [...results].filter(([, error]) => error !== null) as [string, KafkaError][];
  if (failures.length === 0) return;
  const first = failures[0]![1];
  const failed = `[${failures.map(([key]) => key).join(', ')}]`;
  throw new ToolError(first.code, `${kafkaMessage(first)} Failed altering group offsets for the following partitions: ${failed}`);
}
