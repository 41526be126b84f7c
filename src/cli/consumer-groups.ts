/**
 * `spool consumer-groups`: kafka-consumer-groups.sh (Kafka 4.4's
 * ConsumerGroupCommand) on Spool's admin client. Same flags, same checks,
 * same output, column for column:
 * - --list [--state [s,...]] [--type [t,...]]
 * - --describe (--group g... | --all-groups) [--offsets | --members | --state] [--verbose]
 * - --reset-offsets (--group | --all-groups) (--topic t[:p,...]... | --all-topics | --from-file)
 *   with one of --to-earliest, --to-latest, --to-offset, --shift-by,
 *   --to-datetime, --by-duration, --to-current, --from-file; --dry-run (the
 *   default) prints the plan, --execute commits it, --export prints CSV;
 *   refused while the group has active members
 * - --delete (--group | --all-groups), --delete-offsets --group g --topic t[:p,...]
 * As in Kafka, usage errors exit 1 and failures of the command itself print
 * "Error: ..." on stdout and exit 0. Rows Kafka prints in Java HashMap order
 * (reset plans, deleted groups) come in that same order here.
 */
import type { Command } from 'commander';
import { Admin, type ConsumerGroupDescription, type GroupListing } from '../client/admin.js';
import type { TopicPartition } from '../client/cluster.js';
import { KafkaError } from '../client/errors.js';
import type { OffsetAndMetadata } from '../client/group-coordinator.js';
import { javaHashOrder, javaStringHash, javaTopicPartitionHash } from '../client/group-sticky-assignor.js';
import { ErrorCode, errorInfo } from '../protocol/errors.js';
import { CliError, collect, DEFAULT_BOOTSTRAP_SERVER, type CliIo } from './io.js';
import { parseTopicPartitionKey, topicPartitionKey } from '../protocol/topic-partition.js';

interface GroupsFlags {
  bootstrapServer: string;
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
  byDuration?: string;
  toEarliest?: boolean;
  toLatest?: boolean;
  toCurrent?: boolean;
  shiftBy?: string;
  members?: boolean;
  verbose?: boolean;
  offsets?: boolean;
  state?: string | boolean;
  type?: string | boolean;
  validateRegex?: string;
}

const MISSING = '-';

/** Java's %-Ns: left-aligned in N columns, never cut. */
const pad = (text: string | number, width: number): string => String(text).padEnd(width);

const ACTIONS = ['list', 'describe', 'delete', 'resetOffsets', 'deleteOffsets', 'validateRegex'] as const;
const ACTION_FLAGS = '--list, --describe, --delete, --reset-offsets, --delete-offsets, --validate-regex';
const SCENARIOS = ['toOffset', 'toEarliest', 'toCurrent', 'toLatest', 'byDuration', 'toDatetime', 'fromFile', 'shiftBy'] as const;
const SCENARIO_NAMES: Record<(typeof SCENARIOS)[number], string> = {
  toOffset: 'to-offset', toEarliest: 'to-earliest', toCurrent: 'to-current', toLatest: 'to-latest',
  byDuration: 'by-duration', toDatetime: 'to-datetime', fromFile: 'from-file', shiftBy: 'shift-by',
};
const CONSUMER_GROUP_STATES = ['Reconciling', 'Empty', 'PreparingRebalance', 'Dead', 'Assigning', 'Stable', 'CompletingRebalance'];
const NO_EXECUTE_WARNING = 'WARN: No action will be performed as the --execute option is missing. In version 5.0, this command will require either --dry-run or --execute to be specified. You should add the --dry-run option explicitly if you are scripting this command and want to keep the current default behavior without prompting.';

export function registerConsumerGroups(program: Command, io: CliIo): void {
  program
    .command('consumer-groups')
    .description('List, describe, delete consumer groups and reset their offsets (like kafka-consumer-groups.sh)')
    .option('--bootstrap-server <server>', 'the broker to connect to', DEFAULT_BOOTSTRAP_SERVER)
    .option('--group <group>', 'the consumer group to act on (repeatable)', collect, [])
    .option('--topic <topic>', 'topic for --reset-offsets / --delete-offsets, partitions as topic:0,1,2 (repeatable)', collect, [])
    .option('--all-topics', 'with --reset-offsets: every topic the group has offsets for')
    .option('--list', 'list all consumer groups')
    .option('--describe', 'describe consumer groups and their lag')
    .option('--all-groups', 'apply to all consumer groups')
    .option('--delete', 'delete consumer groups')
    .option('--timeout <ms>', 'timeout for some operations', '5000')
    .option('--reset-offsets', 'reset the offsets of an inactive consumer group')
    .option('--delete-offsets', 'delete offsets of a consumer group')
    .option('--dry-run', 'only show the result (the default for --reset-offsets)')
    .option('--execute', 'execute the reset')
    .option('--export', 'print the reset plan as CSV')
    .option('--to-offset <offset>', 'reset to this offset')
    .option('--from-file <path>', 'reset to the offsets in this CSV file')
    .option('--to-datetime <datetime>', "reset to the offsets at this time, 'YYYY-MM-DDTHH:mm:SS.sss'")
    .option('--by-duration <duration>', "reset to the offsets this long ago, 'PnDTnHnMnS'")
    .option('--to-earliest', 'reset to the earliest offset')
    .option('--to-latest', 'reset to the latest offset')
    .option('--to-current', 'reset to the current offset')
    .option('--shift-by <n>', 'move the current offset by n (may be negative)')
    .option('--members', 'with --describe: the members')
    .option('--verbose', 'with --describe: more columns')
    .option('--offsets', 'with --describe: partitions and lag (the default)')
    .option('--state [states]', 'with --describe: the group state; with --list: show states, or only these (comma-separated)')
    .option('--type [types]', 'with --list: show types, or only these (classic, consumer)')
    .option('--validate-regex <regex>', 'check a regular expression for pattern subscriptions')
    .action(async (flags: GroupsFlags) => {
      checkArgs(flags, io);
      if (flags.validateRegex !== undefined) {
        validateRegex(flags.validateRegex, io);
        return;
      }
      const admin = new Admin({ bootstrapServers: flags.bootstrapServer, env: io.env, clientId: 'spool-consumer-groups' });
      try {
        await runAction(admin, flags, io);
      } catch (error) {
        if (error instanceof CliError) throw error;
        if (!(error instanceof KafkaError)) throw error;
        printError(io, `Executing consumer group command failed due to ${error instanceof ToolError ? error.detail : javaException(error)}`);
        io.stderr(`${javaException(error)}\n`);
      } finally {
        await admin.close();
      }
    });
}

/** A failure Kafka's tool reports with its bare message (no exception class). */
export class ToolError extends KafkaError {}

function printError(io: CliIo, message: string): void {
  io.stdout(`\nError: ${message}\n`);
}

/** Kafka's exception class and default message for the errors this tool prints. */
const JAVA_EXCEPTIONS: Partial<Record<number, [string, string]>> = {
  [ErrorCode.GROUP_ID_NOT_FOUND]: ['GroupIdNotFoundException', 'The group id does not exist.'],
  [ErrorCode.NON_EMPTY_GROUP]: ['GroupNotEmptyException', 'The group is not empty.'],
  [ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC]: ['GroupSubscribedToTopicException', 'Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it.'],
  [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]: ['UnknownTopicOrPartitionException', 'This server does not host this topic-partition.'],
  [ErrorCode.INVALID_GROUP_ID]: ['InvalidGroupIdException', 'The group id is invalid.'],
  [ErrorCode.GROUP_AUTHORIZATION_FAILED]: ['GroupAuthorizationException', 'Group authorization failed.'],
  [ErrorCode.TOPIC_AUTHORIZATION_FAILED]: ['TopicAuthorizationException', 'Topic authorization failed.'],
  [ErrorCode.COORDINATOR_NOT_AVAILABLE]: ['CoordinatorNotAvailableException', 'The coordinator is not available.'],
  [ErrorCode.UNKNOWN_MEMBER_ID]: ['UnknownMemberIdException', 'The coordinator is not aware of this member.'],
  [ErrorCode.LEADER_NOT_AVAILABLE]: ['LeaderNotAvailableException', 'There is no leader for this topic-partition as we are in the middle of a leadership election.'],
};

/** The broker's message if it sent one, else Kafka's default for the code. */
export function kafkaMessage(error: KafkaError): string {
  const known = JAVA_EXCEPTIONS[error.code];
  if (known !== undefined && error.detail === errorInfo(error.code).message) return known[1];
  return error.detail;
}

/** How Java prints the exception: its class name and message. */
export function javaException(error: KafkaError): string {
  const known = JAVA_EXCEPTIONS[error.code];
  const name = known?.[0] ?? `${error.errorName.toLowerCase().replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase())}Exception`;
  return `org.apache.kafka.common.errors.${name}: ${kafkaMessage(error)}`;
}

/** Kafka's ConsumerGroupCommandOptions.checkArgs, then its one-action rule, in their order and words. */
function checkArgs(flags: GroupsFlags, io: CliIo): void {
  const hasGroups = flags.group.length > 0 || flags.allGroups === true;
  if (flags.describe === true) {
    if (!hasGroups) throw new CliError('Option [describe] takes one of these options: [group], [all-groups]');
    if ([flags.members, flags.offsets, flags.state !== undefined].filter((x) => x === true).length > 1) {
      throw new CliError('Option [describe] takes at most one of these options: [members], [offsets], [state]');
    }
    if (typeof flags.state === 'string') throw new CliError('Option [describe] does not take a value for [state]');
  }
  if (flags.delete === true) {
    if (!hasGroups) throw new CliError('Option [delete] takes one of these options: [group], [all-groups]');
    if (flags.topic.length > 0) throw new CliError('The consumer does not support topic-specific offset deletion from a consumer group.');
  }
  if (flags.deleteOffsets === true && (flags.group.length === 0 || flags.topic.length === 0)) {
    throw new CliError('Option [delete-offsets] takes the following options: [topic], [group]');
  }
  if (flags.resetOffsets === true) checkResetArgs(flags, io, hasGroups);
  for (const [set, name] of [[flags.members, 'members'], [flags.verbose, 'verbose'], [flags.offsets, 'offsets']] as const) {
    if (set === true && flags.describe !== true) throw new CliError(`Option ${name} is available only when describe is present`);
  }
  if (flags.state !== undefined && flags.describe !== true && flags.list !== true) throw new CliError('Option state is available only when describe or list is present');
  if (flags.type !== undefined && flags.list !== true) throw new CliError('Option type is available only when list is present');
  if (flags.group.length > 0 && flags.allGroups === true) throw new CliError('Option "[group]" can\'t be used with option "[all-groups]"');
  if (flags.group.length > 0 && flags.list === true) throw new CliError('Option "[group]" can\'t be used with option "[list]"');
  if (flags.topic.length > 0 && (flags.list === true || flags.describe === true)) throw new CliError(`Option "[topic]" can't be used with option "[${flags.list === true ? 'list' : 'describe'}]"`);
  const actions = ACTIONS.filter((a) => flags[a] !== undefined && flags[a] !== false);
  if (actions.length !== 1) throw new CliError(`Command must include exactly one action: ${ACTION_FLAGS}`);
}

function checkResetArgs(flags: GroupsFlags, io: CliIo, hasGroups: boolean): void {
  if (flags.dryRun === true && flags.execute === true) throw new CliError('Option [reset-offsets] only accepts one of [execute] and [dry-run]');
  if (flags.dryRun !== true && flags.execute !== true) io.stderr(`${NO_EXECUTE_WARNING}\n`);
  if (!hasGroups) throw new CliError('Option [reset-offsets] takes one of these options: [group], [all-groups]');
  const chosen = SCENARIOS.filter((s) => flags[s] !== undefined && flags[s] !== false);
  if (chosen.length > 1) throw new CliError(`Option "[${SCENARIO_NAMES[chosen[0]!]}]" can't be used with option "[${SCENARIO_NAMES[chosen[1]!]}]"`);
}

function validateRegex(regex: string, io: CliIo): void {
  try {
    new RegExp(regex);
    io.stdout(`The regular expression \`${regex}\` is valid.\n`);
  } catch (error) {
    io.stdout(`The regular expression \`${regex}\` is invalid: ${(error as Error).message}.\n`);
  }
}

async function runAction(admin: Admin, flags: GroupsFlags, io: CliIo): Promise<void> {
  if (flags.list === true) return listGroups(admin, flags, io);
  if (flags.describe === true) return describeGroups(admin, flags, io);
  if (flags.delete === true) return deleteGroups(admin, flags, io);
  if (flags.resetOffsets === true) return resetOffsets(admin, flags, io);
  return deleteOffsets(admin, flags, io);
}

// ---- --list ----

const capitalize = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

function parseStates(value: string | boolean | undefined): string[] {
  if (typeof value !== 'string' || value === '') return [];
  const states = value.split(',').map((s) => s.trim());
  const known = states.map((s) => CONSUMER_GROUP_STATES.find((k) => k.toLowerCase() === s.toLowerCase()));
  if (known.some((k) => k === undefined)) throw new CliError(`Invalid state list '${value}'. Valid states are: ${CONSUMER_GROUP_STATES.join(', ')}`);
  return known as string[];
}

function parseTypes(value: string | boolean | undefined): string[] {
  if (typeof value !== 'string' || value === '') return [];
  const types = value.toLowerCase().split(',').map((t) => t.trim());
  if (types.some((t) => t !== 'classic' && t !== 'consumer')) throw new CliError(`Invalid types list '${value}'. Valid types are: Classic, Consumer`);
  return types;
}

async function listGroups(admin: Admin, flags: GroupsFlags, io: CliIo): Promise<void> {
  const includeState = flags.state !== undefined;
  const includeType = flags.type !== undefined;
  const states = parseStates(flags.state);
  const types = parseTypes(flags.type);
  const groups = await listedGroups(admin, { ...(states.length > 0 ? { states } : {}), ...(types.length > 0 ? { types } : {}) });
  if (!includeState && !includeType) {
    for (const group of groups) io.stdout(`${group.groupId}\n`);
    return;
  }
  io.stdout(formatGroupList(groups.map((g) => ({ groupId: g.groupId, type: g.type === null ? 'Unknown' : capitalize(g.type), state: g.groupState ?? 'Unknown' })), { includeType, includeState }));
}

/** Kafka's printGroupInfo: GROUP padded to the longest id (at least 15) + 10, then TYPE / STATE in 20 columns. */
export function formatGroupList(groups: readonly { groupId: string; type: string; state: string }[], options: { includeType: boolean; includeState: boolean }): string {
  const groupWidth = Math.max(15, ...groups.map((g) => g.groupId.length)) + 10;
  const line = (id: string, type: string, state: string): string => {
    let text = pad(id, groupWidth);
    if (options.includeType) text += ` ${pad(type, 20)}`;
    if (options.includeState) text += ` ${pad(state, 20)}`;
    return `${text}\n`;
  };
  return line('GROUP', 'TYPE', 'STATE') + groups.map((g) => line(g.groupId, g.type, g.state)).join('');
}

// ---- --describe ----

/** Consumer groups in the order Kafka's admin lists them (it collects them in a HashMap keyed by group id). */
async function listedGroups(admin: Admin, options: { states?: string[]; types?: string[] } = {}): Promise<GroupListing[]> {
  return javaHashOrder(await admin.listConsumerGroups(options), (g) => javaStringHash(g.groupId));
}

async function groupIdsOf(admin: Admin, flags: GroupsFlags): Promise<string[]> {
  if (flags.allGroups === true) return (await listedGroups(admin)).map((g) => g.groupId);
  return flags.group;
}

/** Prints the state notice Kafka prints before a group's table; false when there is nothing to print. */
function noteState(io: CliIo, groupId: string, state: string, rows: number): boolean {
  switch (state) {
    case 'Dead':
      printError(io, `Consumer group '${groupId}' does not exist.`);
      return false;
    case 'Empty':
      io.stderr(`\nConsumer group '${groupId}' has no active members.\n`);
      break;
    case 'PreparingRebalance':
    case 'CompletingRebalance':
    case 'Assigning':
    case 'Reconciling':
      io.stderr(`\nWarning: Consumer group '${groupId}' is rebalancing.\n`);
      break;
    case 'Stable':
      break;
    default:
      throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `Expected a valid consumer group state, but found '${state}'.`);
  }
  return rows > 0;
}

async function describeGroups(admin: Admin, flags: GroupsFlags, io: CliIo): Promise<void> {
  const groupIds = [...new Set(await groupIdsOf(admin, flags))];
  const descriptions = (await admin.describeConsumerGroups(groupIds)).sort((a, b) => (a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0));
  const verbose = flags.verbose === true;
  for (const description of descriptions) {
    if (flags.members === true) io.stdout(formatMembers(description, verbose, (rows) => noteState(io, description.groupId, description.groupState, rows)));
    else if (flags.state !== undefined) {
      if (noteState(io, description.groupId, description.groupState, 1)) io.stdout(formatState(description, verbose));
    } else {
      const rows = await offsetRows(admin, description);
      if (noteState(io, description.groupId, description.groupState, rows.length)) io.stdout(formatOffsets(rows, verbose));
    }
  }
}

export interface OffsetRow {
  group: string;
  topic: string | null;
  partition: number | null;
  leaderEpoch: number | null;
  offset: number | null;
  logEndOffset: number | null;
  consumerId: string;
  host: string;
  clientId: string;
}

const byTopicPartition = (a: TopicPartition, b: TopicPartition): number => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition);

/** Kafka's collectGroupsOffsets: members with partitions (most first), then committed partitions no member holds. */
async function offsetRows(admin: Admin, description: ConsumerGroupDescription): Promise<OffsetRow[]> {
  const committed = new Map((await admin.listConsumerGroupOffsets(description.groupId)).map((o) => [topicPartitionKey(o), o]));
  const members = description.members.filter((m) => m.assignment.length > 0).sort((a, b) => b.assignment.length - a.assignment.length);
  const assigned = new Set(members.flatMap((m) => m.assignment.map((tp) => topicPartitionKey(tp))));
  const unassigned = [...committed.values()].filter((o) => !assigned.has(topicPartitionKey(o)));
  const everything = [...members.flatMap((m) => m.assignment), ...unassigned];
  const ends = await logEndOffsets(admin, everything);
  const row = (tp: TopicPartition, who: { consumerId: string; host: string; clientId: string }): OffsetRow => {
    const offset = committed.get(topicPartitionKey(tp));
    return {
      group: description.groupId,
      topic: tp.topic,
      partition: tp.partition,
      leaderEpoch: offset === undefined || offset.leaderEpoch < 0 ? null : offset.leaderEpoch,
      offset: offset?.offset ?? null,
      logEndOffset: ends.get(topicPartitionKey(tp)) ?? null,
      ...who,
    };
  };
  const rows = members.flatMap((m) => [...m.assignment].sort(byTopicPartition).map((tp) => row(tp, { consumerId: m.memberId, host: m.host, clientId: m.clientId })));
  rows.push(...[...unassigned].sort(byTopicPartition).map((tp) => row(tp, { consumerId: MISSING, host: MISSING, clientId: MISSING })));
  return rows;
}

/** Log end offsets of partitions that have a leader (others are unknown: "-"). */
async function logEndOffsets(admin: Admin, partitions: readonly TopicPartition[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (partitions.length === 0) return out;
  const topics = [...new Set(partitions.map((tp) => tp.topic))];
  const led = new Set<string>();
  for (const topic of topics) {
    const described = await admin.describeTopics([topic]).catch(() => []);
    for (const d of described) for (const p of d.partitions) if (p.leader >= 0) led.add(topicPartitionKey({ topic: d.name, partition: p.partition }));
  }
  const queries = partitions.filter((tp) => led.has(topicPartitionKey(tp)));
  if (queries.length === 0) return out;
  for (const listed of await admin.listOffsets(queries.map((tp) => ({ ...tp, spec: 'latest' as const })))) out.set(topicPartitionKey(listed), listed.offset);
  return out;
}

/** Kafka's printOffsets layout for one group. */
export function formatOffsets(rows: readonly OffsetRow[], verbose: boolean): string {
  const width = (pick: (r: OffsetRow) => string): number => Math.max(15, ...rows.map((r) => pick(r).length));
  const groupWidth = width((r) => r.group);
  const topicWidth = width((r) => r.topic ?? MISSING);
  const consumerWidth = width((r) => r.consumerId);
  const hostWidth = width((r) => r.host);
  const show = (value: number | string | null): string => (value === null ? MISSING : String(value));
  const line = (cells: { group: string; topic: string; partition: string; epoch: string; offset: string; end: string; lag: string; consumer: string; host: string; client: string }): string =>
    `\n${pad(cells.group, groupWidth)} ${pad(cells.topic, topicWidth)} ${pad(cells.partition, 10)} ${verbose ? `${pad(cells.epoch, 15)} ` : ''}${pad(cells.offset, 15)} ${pad(cells.end, 15)} ${pad(cells.lag, 15)} ${pad(cells.consumer, consumerWidth)} ${pad(cells.host, hostWidth)} ${cells.client}`;
  let out = line({ group: 'GROUP', topic: 'TOPIC', partition: 'PARTITION', epoch: 'LEADER-EPOCH', offset: 'CURRENT-OFFSET', end: 'LOG-END-OFFSET', lag: 'LAG', consumer: 'CONSUMER-ID', host: 'HOST', client: 'CLIENT-ID' });
  for (const r of rows) {
    const lag = r.offset !== null && r.offset !== -1 && r.logEndOffset !== null ? r.logEndOffset - r.offset : null;
    out += line({ group: r.group, topic: show(r.topic), partition: show(r.partition), epoch: show(r.leaderEpoch), offset: show(r.offset), end: show(r.logEndOffset), lag: show(lag), consumer: r.consumerId, host: r.host, client: r.clientId });
  }
  return `${out}\n`;
}

/** Kafka's getAssignmentString: topic:p,p;topic2:p (topics and partitions sorted). */
function assignmentString(tps: readonly TopicPartition[]): string {
  if (tps.length === 0) return MISSING;
  const byTopic = new Map<string, number[]>();
  for (const tp of tps) byTopic.set(tp.topic, [...(byTopic.get(tp.topic) ?? []), tp.partition]);
  return [...byTopic].map(([topic, ps]) => `${topic}:${[...ps].sort((a, b) => a - b).join(',')}`).sort().join(';');
}

/** Kafka's printMembers layout for one group; `check` prints the state notice and says whether rows follow. */
export function formatMembers(description: ConsumerGroupDescription, verbose: boolean, check: (rows: number) => boolean = () => true): string {
  const members = description.members;
  const show = check(members.length);
  const widths = { group: 15, consumer: 15, instance: 17, host: 15, client: 15, current: 20, target: 20 };
  let includeInstance = false;
  let classic = false;
  let modern = false;
  if (show) {
    for (const m of members) {
      widths.group = Math.max(widths.group, description.groupId.length);
      widths.consumer = Math.max(widths.consumer, m.memberId.length);
      widths.instance = Math.max(widths.instance, (m.groupInstanceId ?? '').length);
      widths.host = Math.max(widths.host, m.host.length);
      widths.client = Math.max(widths.client, m.clientId.length);
      includeInstance ||= (m.groupInstanceId ?? '') !== '';
      widths.current = Math.max(widths.current, assignmentString(m.assignment).length);
      widths.target = Math.max(widths.target, assignmentString(m.targetAssignment ?? []).length);
      classic ||= m.upgraded === false;
      modern ||= m.upgraded === true;
    }
  }
  const migrating = classic && modern;
  const head = (group: string, consumer: string, instance: string, host: string, client: string, count: string): string =>
    `${pad(group, widths.group)} ${pad(consumer, widths.consumer)} ${includeInstance ? `${pad(instance, widths.instance)} ` : ''}${pad(host, widths.host)} ${pad(client, widths.client)} ${pad(count, 15)} `;
  const tail = (epoch: string, current: string, targetEpoch: string, target: string, upgraded: string): string =>
    `${pad(epoch, 15)} ${pad(current, widths.current)} ${pad(targetEpoch, 15)} ${migrating ? `${pad(target, widths.target)} ${upgraded}` : pad(target, widths.target)}`;
  let out = `\n${head('GROUP', 'CONSUMER-ID', 'GROUP-INSTANCE-ID', 'HOST', 'CLIENT-ID', '#PARTITIONS')}`;
  if (verbose) out += tail('CURRENT-EPOCH', 'CURRENT-ASSIGNMENT', 'TARGET-EPOCH', 'TARGET-ASSIGNMENT', 'UPGRADED');
  out += '\n';
  for (const m of members) {
    out += head(description.groupId, m.memberId, m.groupInstanceId ?? '', m.host, m.clientId, String(m.assignment.length));
    if (verbose) {
      out += tail(
        m.memberEpoch === null ? MISSING : String(m.memberEpoch),
        assignmentString(m.assignment),
        description.targetAssignmentEpoch === null ? MISSING : String(description.targetAssignmentEpoch),
        assignmentString(m.targetAssignment ?? []),
        m.upgraded === null ? MISSING : String(m.upgraded),
      );
    }
    out += '\n';
  }
  return out;
}

/** Kafka's printStates layout for one group. */
export function formatState(description: ConsumerGroupDescription, verbose: boolean): string {
  const coordinator = `${description.coordinator.host}:${description.coordinator.port}  (${description.coordinator.nodeId})`;
  const coordinatorWidth = Math.max(25, coordinator.length);
  const groupWidth = Math.max(15, description.groupId.length);
  const strategy = description.partitionAssignor === '' ? MISSING : description.partitionAssignor;
  const line = (cells: string[]): string => verbose
    ? `\n${pad(cells[0]!, groupWidth)} ${pad(cells[1]!, coordinatorWidth)} ${pad(cells[2]!, 20)} ${pad(cells[3]!, 20)} ${pad(cells[4]!, 15)} ${pad(cells[5]!, 25)} ${cells[6]}`
    : `\n${pad(cells[0]!, groupWidth)} ${pad(cells[1]!, coordinatorWidth)} ${pad(cells[2]!, 20)} ${pad(cells[3]!, 20)} ${cells[6]}`;
  const header = line(['GROUP', 'COORDINATOR (ID)', 'ASSIGNMENT-STRATEGY', 'STATE', 'GROUP-EPOCH', 'TARGET-ASSIGNMENT-EPOCH', '#MEMBERS']);
  const values = line([
    description.groupId,
    coordinator,
    strategy,
    description.groupState,
    description.groupEpoch === null ? MISSING : String(description.groupEpoch),
    description.targetAssignmentEpoch === null ? MISSING : String(description.targetAssignmentEpoch),
    String(description.members.length),
  ]);
  return `${header}${values}\n`;
}

// ---- --delete ----

async function deleteGroups(admin: Admin, flags: GroupsFlags, io: CliIo): Promise<void> {
  const groupIds = [...new Set(await groupIdsOf(admin, flags))];
  const results = await admin.deleteConsumerGroups(groupIds);
  const ordered = javaHashOrder(groupIds, javaStringHash);
  const succeeded = ordered.filter((g) => results.get(g) === null);
  const failed = ordered.filter((g) => results.get(g) !== null);
  const quoted = (ids: readonly string[]): string => ids.map((g) => `'${g}'`).join(', ');
  if (failed.length === 0) {
    io.stdout(`Deletion of requested consumer groups (${quoted(succeeded)}) was successful.\n`);
    return;
  }
  printError(io, 'Deletion of some consumer groups failed:');
  for (const g of failed) io.stdout(`* Group '${g}' could not be deleted due to: ${javaException(results.get(g)!)}\n`);
  if (succeeded.length > 0) io.stdout(`\nThese consumer groups were deleted successfully: ${quoted(succeeded)}\n`);
}

// ---- --delete-offsets ----

/** `topic:0,1,2` as partitions (Kafka's parseTopicsWithPartitions). */
export function parseTopicWithPartitions(arg: string): TopicPartition[] {
  const parts = arg.split(':');
  if (parts.length !== 2 || parts[1] === '') throw new CliError(`Invalid topic arg '${arg}', expected topic name and partitions`);
  return parts[1]!.split(',').map((p) => {
    if (!/^-?\d+$/.test(p.trim())) throw new CliError(`Invalid partition '${p}' specified in topic arg '${arg}''`);
    return { topic: parts[0]!, partition: Number(p.trim()) };
  });
}

async function deleteOffsets(admin: Admin, flags: GroupsFlags, io: CliIo): Promise<void> {
  const groupId = flags.group[0]!;
  const results = new Map<string, { tp: TopicPartition; error: KafkaError | null }>();
  const partitions: TopicPartition[] = [];
  for (const arg of flags.topic) {
    if (arg.includes(':')) {
      partitions.push(...parseTopicWithPartitions(arg));
      continue;
    }
    try {
      const [described] = await admin.describeTopics([arg]);
      partitions.push(...described!.partitions.map((p) => ({ topic: arg, partition: p.partition })));
    } catch (error) {
      if (!(error instanceof KafkaError)) throw error;
      results.set(topicPartitionKey({ topic: arg, partition: -1 }), { tp: { topic: arg, partition: -1 }, error: new KafkaError(error.code) });
    }
  }
  const unique = [...new Map(partitions.map((tp) => [topicPartitionKey(tp), tp])).values()];
  const outcome = unique.length === 0 ? { errorCode: ErrorCode.NONE, partitions: new Map<string, number>() } : await admin.deleteConsumerGroupOffsets(groupId, unique);
  for (const tp of unique) {
    const key = topicPartitionKey(tp);
    const code = outcome.errorCode !== ErrorCode.NONE ? outcome.errorCode : outcome.partitions.get(key) ?? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
    results.set(key, { tp, error: code === ErrorCode.NONE ? null : new KafkaError(code) });
  }
  // As Kafka's tool: the request's outcome (its first failure) decides the summary; topics that were not found only get rows.
  const requested = unique.map((tp) => results.get(topicPartitionKey(tp))!);
  const topLevel = outcome.errorCode !== ErrorCode.NONE ? outcome.errorCode : requested.find((r) => r.error !== null)?.error?.code ?? ErrorCode.NONE;
  printDeleteOffsetsOutcome(io, groupId, topLevel, [...results.values()]);
}

function printDeleteOffsetsOutcome(io: CliIo, groupId: string, topLevel: number, results: readonly { tp: TopicPartition; error: KafkaError | null }[]): void {
  if (topLevel === ErrorCode.NONE) io.stdout(`Request succeeded for deleting offsets from group ${groupId}.\n`);
  else if (([ErrorCode.INVALID_GROUP_ID, ErrorCode.GROUP_ID_NOT_FOUND, ErrorCode.GROUP_AUTHORIZATION_FAILED, ErrorCode.NON_EMPTY_GROUP] as number[]).includes(topLevel)) printError(io, kafkaMessage(new KafkaError(topLevel)));
  else if (([ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC, ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION] as number[]).includes(topLevel)) printError(io, 'Encountered some partition-level error, see the follow-up details.');
  else printError(io, `Encountered some unknown error: ${errorInfo(topLevel).name}`);
  const topicWidth = Math.max(15, ...results.map((r) => r.tp.topic.length));
  const line = (topic: string, partition: string, status: string): string => `\n${pad(topic, topicWidth)} ${pad(partition, 10)} ${pad(status, 15)}`;
  let out = line('TOPIC', 'PARTITION', 'STATUS');
  // Kafka sorts these rows by topic name and partition number concatenated as text.
  const sorted = [...results].sort((a, b) => {
    const x = `${a.tp.topic}${a.tp.partition}`;
    const y = `${b.tp.topic}${b.tp.partition}`;
    return x < y ? -1 : x > y ? 1 : 0;
  });
  for (const r of sorted) out += line(r.tp.topic, r.tp.partition >= 0 ? String(r.tp.partition) : MISSING, r.error === null ? 'Successful' : `Error: ${javaException(r.error)}`);
  io.stdout(`${out}\n`);
}

// ---- --reset-offsets ----

type ResetPlan = Map<string, number>;

async function resetOffsets(admin: Admin, flags: GroupsFlags, io: CliIo): Promise<void> {
  const groupIds = flags.allGroups === true ? await groupIdsOf(admin, flags) : flags.group;
  const results = new Map<string, { tps: TopicPartition[]; plan: ResetPlan }>();
  for (const groupId of [...new Set(groupIds)]) {
    let state: string;
    try {
      [{ groupState: state }] = await admin.describeConsumerGroups([groupId]) as [ConsumerGroupDescription];
    } catch (error) {
      if (!(error instanceof KafkaError) || error.code !== ErrorCode.GROUP_ID_NOT_FOUND) throw error;
      state = 'Dead';
    }
    if (state !== 'Empty' && state !== 'Dead') {
      printError(io, `Assignments can only be reset if the group '${groupId}' is inactive, but the current state is ${state}.`);
      results.set(groupId, { tps: [], plan: new Map() });
      continue;
    }
    results.set(groupId, await resetInactiveGroup(admin, flags, io, groupId));
  }
  const ordered = javaHashOrder([...results.keys()], javaStringHash).map((groupId) => {
    const { tps, plan } = results.get(groupId)!;
    return { groupId, rows: javaHashOrder(tps, javaTopicPartitionHash).map((tp) => ({ ...tp, offset: plan.get(topicPartitionKey(tp))! })) };
  });
  if (flags.export === true) {
    const single = flags.group.length === 1;
    io.stdout(`${ordered.flatMap((g) => g.rows.map((r) => `${single ? '' : `${g.groupId},`}${r.topic},${r.partition},${r.offset}\n`)).join('')}\n`);
    return;
  }
  io.stdout(formatResetPlan(ordered));
}

/** Kafka's printOffsetsToReset layout. */
export function formatResetPlan(groups: readonly { groupId: string; rows: readonly (TopicPartition & { offset: number })[] }[]): string {
  const groupWidth = Math.max(15, ...groups.map((g) => g.groupId.length));
  const topicWidth = Math.max(15, ...groups.flatMap((g) => g.rows.map((r) => r.topic.length)));
  const line = (group: string, topic: string, partition: string, offset: string): string => `\n${pad(group, groupWidth)} ${pad(topic, topicWidth)} ${pad(partition, 10)} ${offset}`;
  let out = groups.length > 0 ? line('GROUP', 'TOPIC', 'PARTITION', 'NEW-OFFSET') : '';
  for (const g of groups) for (const r of g.rows) out += line(g.groupId, r.topic, String(r.partition), String(r.offset));
  return `${out}\n`;
}

async function resetInactiveGroup(admin: Admin, flags: GroupsFlags, io: CliIo, groupId: string): Promise<{ tps: TopicPartition[]; plan: ResetPlan }> {
  const committed = new Map((await admin.listConsumerGroupOffsets(groupId)).map((o) => [topicPartitionKey(o), o]));
  let tps: TopicPartition[];
  if (flags.allTopics === true) tps = [...committed.values()].map((o) => ({ topic: o.topic, partition: o.partition }));
  else if (flags.topic.length > 0) tps = await partitionsToReset(admin, flags.topic);
  else if (flags.fromFile !== undefined) tps = [];
  else throw new CliError('One of the reset scopes should be defined: --all-topics, --topic.');
  await checkPartitionsValid(admin, tps);
  const plan = await prepareReset(admin, flags, io, groupId, tps, committed);
  const planned = flags.fromFile !== undefined && tps.length === 0 ? [...plan.keys()].map(parseTopicPartitionKey) : tps.filter((tp) => plan.has(topicPartitionKey(tp)));
  if (flags.execute === true && flags.dryRun !== true && planned.length > 0) {
    await admin.alterConsumerGroupOffsets(groupId, planned.map((tp) => ({ ...tp, offset: plan.get(topicPartitionKey(tp))! })));
  }
  return { tps: planned, plan };
}


/** --topic arguments: `t:0,1` names partitions, `t` means all of t's partitions. */
export async function partitionsToReset(admin: Admin, args: readonly string[]): Promise<TopicPartition[]> {
  const named = args.filter((a) => a.includes(':')).flatMap(parseTopicWithPartitions);
  const whole = args.filter((a) => !a.includes(':'));
  if (whole.length === 0) return named;
  const described = await admin.describeTopics(whole).catch((error: unknown) => { throw toolError(error); });
  return [...named, ...described.flatMap((d) => d.partitions.map((p) => ({ topic: d.name, partition: p.partition })))];
}

/** A Kafka error reported with Kafka's bare message for its code, as Kafka's tool reports a failed topic lookup. */
function toolError(error: unknown): unknown {
  return error instanceof KafkaError ? new ToolError(error.code, JAVA_EXCEPTIONS[error.code]?.[1] ?? error.detail) : error;
}

export async function checkPartitionsValid(admin: Admin, tps: readonly TopicPartition[]): Promise<void> {
  if (tps.length === 0) return;
  const topics = [...new Set(tps.map((tp) => tp.topic))];
  const described = await admin.describeTopics(topics).catch((error: unknown) => { throw toolError(error); });
  const exists = new Map(described.flatMap((d) => d.partitions.map((p) => [topicPartitionKey({ topic: d.name, partition: p.partition }), p.leader] as const)));
  const missing = tps.filter((tp) => !exists.has(topicPartitionKey(tp)));
  if (missing.length > 0) throw new ToolError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `The partitions "${missing.map((tp) => `${tp.topic}-${tp.partition}`).join(',')}" do not exist`);
  const leaderless = tps.filter((tp) => exists.get(topicPartitionKey(tp))! < 0);
  if (leaderless.length > 0) throw new ToolError(ErrorCode.LEADER_NOT_AVAILABLE, `The partitions "${leaderless.map((tp) => `${tp.topic}-${tp.partition}`).join(',')}" have no leader`);
}

export async function listedOffsets(admin: Admin, tps: readonly TopicPartition[], spec: 'earliest' | 'latest' | number): Promise<Map<string, number>> {
  if (tps.length === 0) return new Map();
  const listed = await admin.listOffsets(tps.map((tp) => ({ ...tp, spec })));
  return new Map(listed.map((l) => [topicPartitionKey(l), l.offset]));
}

/** Kafka's scenarios, in its order of precedence. */
async function prepareReset(admin: Admin, flags: GroupsFlags, io: CliIo, groupId: string, tps: readonly TopicPartition[], committed: ReadonlyMap<string, TopicPartition & OffsetAndMetadata>): Promise<ResetPlan> {
  if (flags.toOffset !== undefined) {
    const offset = parseLong(flags.toOffset, 'to-offset');
    return clampToLog(admin, io, new Map(tps.map((tp) => [topicPartitionKey(tp), offset])));
  }
  if (flags.toEarliest === true) return listedOffsets(admin, tps, 'earliest');
  if (flags.toLatest === true) return listedOffsets(admin, tps, 'latest');
  if (flags.shiftBy !== undefined) {
    const shift = parseLong(flags.shiftBy, 'shift-by');
    const requested = new Map<string, number>();
    for (const tp of tps) {
      const current = committed.get(topicPartitionKey(tp));
      if (current === undefined) throw new CliError(`Cannot shift offset for partition ${tp.topic}-${tp.partition} since there is no current committed offset`);
      requested.set(topicPartitionKey(tp), current.offset + shift);
    }
    return clampToLog(admin, io, requested);
  }
  if (flags.toDatetime !== undefined) return offsetsAtTime(admin, io, tps, parseDateTime(flags.toDatetime));
  if (flags.byDuration !== undefined) return offsetsAtTime(admin, io, tps, io.env.clock.nowMs() - parseDuration(flags.byDuration));
  if (flags.fromFile !== undefined) {
    const plans = parseResetPlan((await io.env.fs.readFile(flags.fromFile)).toString('utf8'), flags.group);
    const plan = plans.get(groupId);
    if (plan === undefined) {
      printError(io, `No reset plan for group ${groupId} found.`);
      return new Map();
    }
    return clampToLog(admin, io, plan);
  }
  if (flags.toCurrent === true) {
    const plan = new Map<string, number>();
    const without: TopicPartition[] = [];
    for (const tp of tps) {
      const current = committed.get(topicPartitionKey(tp));
      if (current === undefined) without.push(tp);
      else plan.set(topicPartitionKey(tp), current.offset);
    }
    for (const [k, offset] of await listedOffsets(admin, without, 'latest')) plan.set(k, offset);
    return plan;
  }
  throw new CliError(`Option '[reset-offsets]' requires one of the following scenarios: [${SCENARIOS.map((s) => `[${SCENARIO_NAMES[s]}]`).join(', ')}]`);
}

export function parseLong(text: string, name: string): number {
  if (!/^-?\d+$/.test(text.trim())) throw new CliError(`Cannot parse argument '${text}' of option ${name}`);
  return Number(text.trim());
}

/** Requested offsets moved inside [log start, log end], with Kafka's warnings. */
export async function clampToLog(admin: Admin, io: CliIo, requested: ReadonlyMap<string, number>): Promise<ResetPlan> {
  const tps = [...requested.keys()].map(parseTopicPartitionKey);
  const starts = await listedOffsets(admin, tps, 'earliest');
  const ends = await listedOffsets(admin, tps, 'latest');
  const plan = new Map<string, number>();
  for (const [k, offset] of requested) {
    const name = k; // topicPartitionKey is Kafka's TopicPartition.toString
    const end = ends.get(k);
    const start = starts.get(k);
    if (end !== undefined && offset > end) {
      io.stderr(`WARN New offset (${offset}) is higher than latest offset for topic partition ${name}. Value will be set to ${end}.\n`);
      plan.set(k, end);
    } else if (start !== undefined && offset < start) {
      io.stderr(`WARN New offset (${offset}) is lower than earliest offset for topic partition ${name}. Value will be set to ${start}.\n`);
      plan.set(k, start);
    } else {
      plan.set(k, offset);
    }
  }
  return plan;
}

/** The first offset at or after `timestampMs`; an empty answer falls back to the log end, with Kafka's notice. */
export async function offsetsAtTime(admin: Admin, io: CliIo, tps: readonly TopicPartition[], timestampMs: number): Promise<ResetPlan> {
  const found = await listedOffsets(admin, tps, timestampMs);
  const empty = javaHashOrder(tps.filter((tp) => (found.get(topicPartitionKey(tp)) ?? -1) < 0), javaTopicPartitionHash);
  for (const tp of empty) io.stdout(`\nWarn: Partition ${tp.partition} from topic ${tp.topic} is empty. Falling back to latest known offset.\n`);
  for (const [k, offset] of await listedOffsets(admin, empty, 'latest')) found.set(k, offset);
  return found;
}

/**
 * Kafka's Utils.getDateTime: 'yyyy-MM-ddTHH:mm:ss.SSS' with an optional
 * zone (Z, +hh:mm, +hhmm, +hh); without one the time is UTC.
 */
export function parseDateTime(text: string): number {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3})(Z|[+-]\d{2}(?::?\d{2})?)?$/.exec(text.trim());
  if (match === null) {
    if (!text.includes('T')) throw new CliError("Error parsing timestamp. It does not contain a 'T' according to ISO8601 format");
    throw new CliError(`Unparseable date: "${text}"`);
  }
  const [, y, mo, d, h, mi, s, ms, zone] = match;
  const utcMs = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), Number(ms));
  if (zone === undefined || zone === 'Z') return utcMs;
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  const offsetMinutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || '0');
  return utcMs - sign * offsetMinutes * 60_000;
}

/** Java's Duration.parse: PnDTnHnMn.nS, each part optional, signs allowed. */
export function parseDuration(text: string): number {
  const match = /^([-+]?)P(?:([-+]?\d+)D)?(?:T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+)(?:[.,](\d{0,9}))?S)?)?$/i.exec(text.trim());
  if (match === null || /T$/i.test(text.trim()) || text.trim().toUpperCase() === 'P') throw new CliError(`Text cannot be parsed to a Duration: ${text}`);
  const [, sign, days, hours, minutes, seconds, fraction] = match;
  const secondsSign = seconds?.startsWith('-') ? -1 : 1;
  const ms = Number(days ?? 0) * 86_400_000 + Number(hours ?? 0) * 3_600_000 + Number(minutes ?? 0) * 60_000
    + Number(seconds ?? 0) * 1000 + secondsSign * Math.floor(Number(`0.${fraction ?? '0'}`) * 1000);
  return sign === '-' ? -ms : ms;
}

/**
 * A reset plan CSV: `topic,partition,offset` lines for a single --group,
 * else `group,topic,partition,offset`.
 */
export function parseResetPlan(csv: string, groups: readonly string[]): Map<string, Map<string, number>> {
  const lines = csv.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  const out = new Map<string, Map<string, number>>();
  const add = (group: string, topic: string, partition: string, offset: string, line: string): void => {
    if (!/^-?\d+$/.test(partition) || !/^-?\d+$/.test(offset)) throw new CliError(`Invalid reset plan line '${line}'`);
    if (!out.has(group)) out.set(group, new Map());
    out.get(group)!.set(topicPartitionKey({ topic, partition: Number(partition) }), Number(offset));
  };
  const first = lines[0]?.split(',') ?? [];
  const noGroup = groups.length === 1 && first.length === 3 && /^-?\d+$/.test(first[1]!) && /^-?\d+$/.test(first[2]!);
  for (const line of lines) {
    const cells = line.split(',');
    if (noGroup && cells.length === 3) add(groups[0]!, cells[0]!, cells[1]!, cells[2]!, line);
    else if (!noGroup && cells.length === 4) add(cells[0]!, cells[1]!, cells[2]!, cells[3]!, line);
    else throw new CliError(`Invalid reset plan line '${line}'`);
  }
  return out;
}
