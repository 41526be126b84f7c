/**
 * `spool reassign-partitions`: kafka-reassign-partitions.sh on Spool's
 * admin client, with its flags, its JSON (version 1: {"version":1,
 * "partitions":[{"topic","partition","replicas","log_dirs"}]}, topics to
 * move as {"version":1,"topics":[{"topic"}]}) and its output text.
 *
 *   --generate  --topics-to-move-json-file --broker-list: the current
 *               assignment and a proposed one (Kafka's round robin of
 *               AdminUtils.assignReplicasToBrokers, rack-aware unless
 *               --disable-rack-aware).
 *   --execute   --reassignment-json-file: prints the current assignment
 *               (to roll back with) and starts the reassignments; refuses
 *               while others are in progress unless --additional;
 *               --disallow-replication-factor-change (KIP-860).
 *   --verify    the state of each partition of the file; once nothing is in
 *               progress, clears the replication throttles (unless
 *               --preserve-throttles), as Kafka's tool does.
 *   --cancel    cancels the file's reassignments that are in progress.
 *   --list      the reassignments in progress.
 * --list and --cancel also go to the controllers (--bootstrap-controller).
 *
 * A failed action prints its error on stdout and exits with 1, as Kafka's
 * tool does (its "Error: ..." lines without the Java stack trace); usage
 * errors go to stderr.
 *
 * --throttle sets Kafka's replication throttles (KIP-73) on the moves:
 * leader/follower.replication.throttled.replicas on their topics and
 * leader/follower.replication.throttled.rate on their brokers.
 *
 * Not done (docs/SKIPPED.md): log_dirs other than "any" (AlterReplicaLogDirs),
 * --replica-alter-log-dirs-throttle.
 */
import { CommanderError, type Command } from 'commander';
import { Admin, type PartitionReassignment } from '../client/admin.js';
import { parseBootstrapServers } from '../client/cluster.js';
import { brokerTarget, controllerTarget, type ReassignmentTarget } from './reassign-targets.js';
import { KafkaError } from '../client/errors.js';
import { topicPartitionKey, type TopicPartition } from '../protocol/topic-partition.js';
import type { Random } from '../io/random.js';
import { CliError, DEFAULT_BOOTSTRAP_SERVER, type CliIo } from './io.js';

interface ReassignFlags {
  bootstrapServer?: string;
  bootstrapController?: string;
  generate?: boolean;
  execute?: boolean;
  verify?: boolean;
  cancel?: boolean;
  list?: boolean;
  reassignmentJsonFile?: string;
  topicsToMoveJsonFile?: string;
  brokerList?: string;
  additional?: boolean;
  preserveThrottles?: boolean;
  disallowReplicationFactorChange?: boolean;
  disableRackAware?: boolean;
  throttle?: string;
  timeout?: string;
}

/** A failed action (Kafka's TerseException and AdminCommandFailedException): printed on stdout, exit code 1. */
class ToolError extends CliError {}

const ANY_LOG_DIR = 'any';
const BROKER_LEVEL_THROTTLES = ['leader.replication.throttled.rate', 'follower.replication.throttled.rate', 'replica.alter.log.dirs.io.max.bytes.per.second'];
const TOPIC_LEVEL_THROTTLES = ['leader.replication.throttled.replicas', 'follower.replication.throttled.replicas'];
const YOU_MUST_RUN_VERIFY_PERIODICALLY_MESSAGE = 'Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed.';
const CANNOT_EXECUTE_BECAUSE_OF_EXISTING_MESSAGE =
  'Cannot execute because there is an existing partition assignment.  Use --additional to override this and create a new partition assignment in addition to the existing one. The --additional flag can also be used to change the throttle by resubmitting the current reassignment.';

type Assignment = { tp: TopicPartition; replicas: number[] };

export function registerReassignPartitions(program: Command, io: CliIo): void {
  program
    .command('reassign-partitions')
    .description('Move partitions between brokers: generate, execute, verify, cancel and list reassignments (like kafka-reassign-partitions.sh)')
    .option('--bootstrap-server <server>', `the brokers to connect to (default: "${DEFAULT_BOOTSTRAP_SERVER}")`)
    .option('--bootstrap-controller <controller>', 'with --list or --cancel: the controllers to connect to instead of brokers')
    .option('--generate', 'propose an assignment of --topics-to-move-json-file over --broker-list')
    .option('--execute', 'start the reassignments of --reassignment-json-file')
    .option('--verify', 'show the state of the reassignments of --reassignment-json-file')
    .option('--cancel', 'cancel the reassignments of --reassignment-json-file')
    .option('--list', 'list the reassignments in progress')
    .option('--reassignment-json-file <file>', 'the reassignment, in Kafka\'s JSON (version 1)')
    .option('--topics-to-move-json-file <file>', 'with --generate: {"version":1,"topics":[{"topic":"t"}]}')
    .option('--broker-list <ids>', 'with --generate: the brokers to place replicas on, e.g. 1,2,3')
    .option('--additional', 'with --execute: start even while other reassignments are in progress')
    .option('--preserve-throttles', 'with --verify or --cancel: leave the replication throttles as they are')
    .option('--disallow-replication-factor-change', "with --execute: refuse a target with another replication factor than the partition's (KIP-860)")
    .option('--disable-rack-aware', 'with --generate: place replicas without regard to racks')
    .option('--throttle <bytes-per-sec>', 'with --execute: throttle the replication of the moves to this rate (leader and follower, per broker); --verify removes it once done')
    .option('--timeout <ms>', 'how long to wait for log directory moves to start (unused: no log directory moves)')
    .action(async (flags: ReassignFlags) => {
      const admin = new Admin({ bootstrapServers: flags.bootstrapServer ?? DEFAULT_BOOTSTRAP_SERVER, env: io.env, clientId: 'reassign-partitions-tool' });
      try {
        await runReassignPartitions(admin, flags, io);
      } catch (error) {
        const message = error instanceof KafkaError ? `Error: ${error.detail}` : error instanceof ToolError ? error.message : null;
        if (message === null) throw error;
        // As Kafka's tool: a failed action prints its error on stdout (without the Java stack trace) and exits with 1.
        io.stdout(`${message}\n`);
        throw new CommanderError(1, 'reassign-partitions.failed', message);
      } finally {
        await admin.close();
      }
    });
}

async function runReassignPartitions(admin: Admin, flags: ReassignFlags, io: CliIo): Promise<void> {
  const actions = (['generate', 'execute', 'verify', 'cancel', 'list'] as const).filter((action) => flags[action] === true);
  if (actions.length !== 1) throw new CliError('Command must include exactly one action: --generate, --execute, --verify, --cancel, --list');
  const out = (text: string) => io.stdout(text);
  const target = reassignmentTarget(admin, flags, { io, action: actions[0]! });
  if (flags.list === true) return out(`${await currentReassignmentsText(target)}\n`);
  if (flags.generate === true) {
    if (flags.topicsToMoveJsonFile === undefined) throw new CliError('Missing required argument "[topics-to-move-json-file]"');
    if (flags.brokerList === undefined) throw new CliError('Missing required argument "[broker-list]"');
    const topicsJson = await readText(io, flags.topicsToMoveJsonFile);
    return generateAssignment(admin, { topicsJson, brokerList: flags.brokerList, rackAware: flags.disableRackAware !== true, random: io.env.random, out });
  }
  if (flags.reassignmentJsonFile === undefined) throw new CliError('Missing required argument "[reassignment-json-file]"');
  const assignments = parseReassignmentJson(await readText(io, flags.reassignmentJsonFile));
  if (flags.execute === true) {
    const throttle = flags.throttle === undefined ? null : Number(flags.throttle);
    if (throttle !== null && (!Number.isSafeInteger(throttle) || throttle < 0)) throw new CliError(`Invalid --throttle ${flags.throttle}: bytes per second, an integer`);
    return executeAssignment(admin, assignments, { additional: flags.additional === true, allowReplicationFactorChange: flags.disallowReplicationFactorChange !== true, throttle, out });
  }
  if (flags.verify === true) return verifyAssignment(admin, assignments, { preserveThrottles: flags.preserveThrottles === true, out });
  return cancelAssignment(target, assignments, { preserveThrottles: flags.preserveThrottles === true, out });
}

/** Kafka's checks of --bootstrap-server / --bootstrap-controller, and the target they name. */
function reassignmentTarget(admin: Admin, flags: ReassignFlags, options: { io: CliIo; action: string }): ReassignmentTarget {
  if (flags.bootstrapServer !== undefined && flags.bootstrapController !== undefined) throw new CliError("Please don't specify both --bootstrap-server and --bootstrap-controller");
  if (flags.bootstrapController === undefined) return brokerTarget(admin);
  if (options.action !== 'list' && options.action !== 'cancel') throw new CliError(`Option "[bootstrap-controller]" can't be used with action "[${options.action}]"`);
  return controllerTarget(parseBootstrapServers(flags.bootstrapController), options.io);
}

async function readText(io: CliIo, file: string): Promise<string> {
  return (await io.env.fs.readFile(file)).toString('utf8');
}

// ---- JSON

/** Kafka's parsePartitionReassignmentData (version 1); log_dirs must be "any". */
export function parseReassignmentJson(text: string): Assignment[] {
  const json = parseJsonObject(text);
  const version = json['version'] ?? 1;
  if (version !== 1) throw new ToolError(`Error: Not supported version field value ${String(version)}`);
  const partitions = json['partitions'] ?? [];
  if (!Array.isArray(partitions)) throw new ToolError('Error: "partitions" must be an array');
  const assignments = partitions.map((entry: unknown): Assignment => {
    const fields = entry as Record<string, unknown>;
    const topic = fields['topic'];
    const partition = fields['partition'];
    const replicas = fields['replicas'];
    if (typeof topic !== 'string' || !Number.isInteger(partition) || !Array.isArray(replicas) || !replicas.every((r) => Number.isInteger(r))) {
      throw new ToolError(`Error: each partition needs "topic" (a string), "partition" (an integer) and "replicas" (integers): ${JSON.stringify(entry)}`);
    }
    const tp = { topic, partition: partition as number };
    const logDirs = fields['log_dirs'] ?? replicas.map(() => ANY_LOG_DIR);
    if (!Array.isArray(logDirs) || logDirs.length !== replicas.length) {
      throw new ToolError(`Error: Size of replicas list ${listText(replicas as number[])} is different from size of log dirs list ${JSON.stringify(logDirs)} for partition ${tpText(tp)}`);
    }
    if (logDirs.some((dir) => dir !== ANY_LOG_DIR)) throw new ToolError(`Error: log_dirs other than "any" are not supported (moving replicas between log directories): ${tpText(tp)}`);
    return { tp, replicas: replicas as number[] };
  });
  return assignments;
}

function parseJsonObject(text: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ToolError('Error: The input string is not a valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new ToolError('Error: The input string is not a valid JSON');
  return parsed as Record<string, unknown>;
}

/** Kafka's formatAsReassignmentJson: partitions sorted by topic then partition; a log dir not known is "any". */
export function formatAsReassignmentJson(assignments: readonly Assignment[], logDirs: ReadonlyMap<string, string | null> = new Map()): string {
  const partitions = sortedByPartition(assignments).map(({ tp, replicas }) => ({
    topic: tp.topic,
    partition: tp.partition,
    replicas,
    log_dirs: replicas.map((replica) => logDirs.get(`${topicPartitionKey(tp)}-${replica}`) ?? ANY_LOG_DIR),
  }));
  return JSON.stringify({ version: 1, partitions });
}

/** Kafka 4.4's getReplicaToLogDir: where each replica on a live broker is now. */
async function replicaLogDirs(admin: Admin, assignments: readonly Assignment[]): Promise<Map<string, string | null>> {
  const live = new Set((await admin.describeCluster()).brokers.map((broker) => broker.nodeId));
  return admin.describeReplicaLogDirs(assignments.flatMap((a) => a.replicas.filter((id) => live.has(id)).map((brokerId) => ({ ...a.tp, brokerId }))));
}

function sortedByPartition<T extends { tp: TopicPartition }>(entries: readonly T[]): T[] {
  return [...entries].sort((a, b) => (a.tp.topic === b.tp.topic ? a.tp.partition - b.tp.partition : a.tp.topic < b.tp.topic ? -1 : 1));
}

function tpText(tp: TopicPartition): string {
  return `${tp.topic}-${tp.partition}`;
}

function listText(values: readonly number[]): string {
  return `[${values.join(', ')}]`;
}

// ---- --generate

async function generateAssignment(admin: Admin, options: { topicsJson: string; brokerList: string; rackAware: boolean; random: Random; out: (text: string) => void }): Promise<void> {
  const brokers = options.brokerList.split(',').map((id) => Number(id.trim()));
  if (brokers.some((id) => !Number.isInteger(id))) throw new ToolError(`Error: invalid --broker-list ${options.brokerList}`);
  const duplicateBrokers = duplicates(brokers);
  if (duplicateBrokers.length > 0) throw new ToolError(`Error: Broker list contains duplicate entries: [${duplicateBrokers.join(', ')}]`);
  const topics = parseTopicsJson(options.topicsJson);
  const duplicateTopics = duplicates(topics);
  if (duplicateTopics.length > 0) throw new ToolError(`Error: List of topics to reassign contains duplicate entries: [${duplicateTopics.join(', ')}]`);
  const current = await currentAssignments(admin, topics);
  const usable = (await admin.describeCluster()).brokers
    .filter((broker) => brokers.includes(broker.nodeId))
    .map((broker) => ({ id: broker.nodeId, rack: options.rackAware ? broker.rack : null }));
  const rackless = usable.filter((broker) => broker.rack === null).length;
  if (rackless !== 0 && rackless !== usable.length) {
    throw new ToolError('Error: Not all brokers have rack information. Add --disable-rack-aware in command line to make replica assignment without rack information.');
  }
  const proposed: Assignment[] = [];
  for (const topic of [...new Set(current.map((a) => a.tp.topic))]) {
    const partitions = current.filter((a) => a.tp.topic === topic);
    const replicationFactor = partitions[0]!.replicas.length;
    assignReplicasToBrokers(usable, { partitions: partitions.length, replicationFactor, random: options.random }).forEach((replicas, partition) => proposed.push({ tp: { topic, partition }, replicas }));
  }
  options.out(`Current partition replica assignment\n${formatAsReassignmentJson(current, await replicaLogDirs(admin, current))}\n\n`);
  options.out(`Proposed partition reassignment configuration\n${formatAsReassignmentJson(proposed)}\n`);
}

function parseTopicsJson(text: string): string[] {
  const json = parseJsonObject(text);
  const version = json['version'] ?? 1;
  if (version !== 1) throw new ToolError(`Error: Not supported version field value ${String(version)}`);
  const topics = json['topics'] ?? [];
  if (!Array.isArray(topics)) throw new ToolError('Error: "topics" must be an array');
  return topics.map((entry: unknown) => {
    const topic = (entry as Record<string, unknown>)['topic'];
    if (typeof topic !== 'string') throw new ToolError(`Error: each topic needs "topic" (a string): ${JSON.stringify(entry)}`);
    return topic;
  });
}

function duplicates<T>(values: readonly T[]): T[] {
  return [...new Set(values.filter((value, index) => values.indexOf(value) !== index))];
}

/** A broker --generate may place replicas on, with its rack unless --disable-rack-aware. */
export interface BrokerPlacement {
  id: number;
  rack: string | null;
}

/**
 * Kafka's AdminUtils.assignReplicasToBrokers: the first replica of
 * partition p on broker (p + start) mod n, the others shifted by a per-round
 * offset, start and offset drawn at random; when the brokers have racks, over
 * the brokers alternated by rack, skipping a broker whose rack (or itself)
 * already holds a replica while another does not.
 */
export function assignReplicasToBrokers(brokers: readonly BrokerPlacement[], options: { partitions: number; replicationFactor: number; random: Random }): number[][] {
  const n = brokers.length;
  if (options.replicationFactor <= 0) throw new ToolError('Error: Replication factor must be larger than 0.');
  if (options.replicationFactor > n) throw new ToolError(`Error: Replication factor: ${options.replicationFactor} larger than available brokers: ${n}.`);
  const racked = brokers.some((broker) => broker.rack !== null);
  const rackOf = new Map(brokers.map((broker) => [broker.id, broker.rack]));
  const arranged = racked ? rackAlternatedBrokerList(brokers) : brokers.map((broker) => broker.id);
  const numRacks = new Set(brokers.map((broker) => broker.rack)).size;
  const startIndex = options.random.nextInt(n);
  let nextReplicaShift = options.random.nextInt(n);
  const replicaIndex = (first: number, shift: number, index: number) => (first + 1 + ((shift + index) % (n - 1))) % n;
  const assignment: number[][] = [];
  for (let partition = 0; partition < options.partitions; partition++) {
    if (partition > 0 && partition % n === 0) nextReplicaShift += 1;
    const first = (partition + startIndex) % n;
    const replicas = [arranged[first]!];
    if (!racked) {
      for (let j = 0; j < options.replicationFactor - 1; j++) replicas.push(arranged[replicaIndex(first, nextReplicaShift, j)]!);
    } else {
      const racks = new Set([rackOf.get(arranged[first]!)]);
      for (let k = 0; replicas.length < options.replicationFactor; k++) {
        const broker = arranged[replicaIndex(first, nextReplicaShift * numRacks, k)]!;
        const rack = rackOf.get(broker);
        const rackFree = !racks.has(rack) || racks.size === numRacks;
        const brokerFree = !replicas.includes(broker) || replicas.length === n;
        if (!rackFree || !brokerFree) continue;
        replicas.push(broker);
        racks.add(rack);
      }
    }
    assignment.push(replicas);
  }
  return assignment;
}

/** Kafka's getRackAlternatedBrokerList: one broker of each rack in turn (racks sorted, brokers by id). */
function rackAlternatedBrokerList(brokers: readonly BrokerPlacement[]): number[] {
  const byRack = new Map<string, number[]>();
  for (const broker of brokers) byRack.set(broker.rack!, [...(byRack.get(broker.rack!) ?? []), broker.id]);
  const racks = [...byRack.keys()].sort();
  for (const ids of byRack.values()) ids.sort((a, b) => a - b);
  const arranged: number[] = [];
  for (let round = 0; arranged.length < brokers.length; round++) {
    for (const rack of racks) {
      const id = byRack.get(rack)![round];
      if (id !== undefined) arranged.push(id);
    }
  }
  return arranged;
}

async function currentAssignments(admin: Admin, topics: readonly string[]): Promise<Assignment[]> {
  const known = new Set(await admin.listTopics({ listInternal: true }));
  const missing = topics.find((topic) => !known.has(topic));
  if (missing !== undefined) throw new ToolError(`Error: Topic ${missing} not found.`);
  const described = topics.length === 0 ? [] : await admin.describeTopics(topics);
  return described.flatMap((topic) => topic.partitions.map((p) => ({ tp: { topic: topic.name, partition: p.partition }, replicas: p.replicas })));
}

// ---- --execute

interface ExecuteOptions {
  additional: boolean;
  allowReplicationFactorChange: boolean;
  /** --throttle in bytes/s, or null for none. */
  throttle: number | null;
  out: (text: string) => void;
}

async function executeAssignment(admin: Admin, assignments: Assignment[], options: ExecuteOptions): Promise<void> {
  checkExecuteAssignments(assignments);
  const ongoing = await admin.listPartitionReassignments();
  if (!options.additional && ongoing.length > 0) throw new ToolError(CANNOT_EXECUTE_BECAUSE_OF_EXISTING_MESSAGE);
  const registered = new Set((await admin.describeCluster()).brokers.map((broker) => broker.nodeId));
  const unknown = assignments.flatMap((a) => a.replicas).find((id) => !registered.has(id));
  if (unknown !== undefined) throw new ToolError(`Error: Unknown broker id ${unknown}`);
  const current = await currentAssignmentsOf(admin, assignments.map((a) => a.tp));
  options.out(`Current partition replica assignment\n\n${formatAsReassignmentJson(current, await replicaLogDirs(admin, current))}\n\nSave this to use as the --reassignment-json-file option during rollback\n`);
  if (options.throttle !== null) {
    options.out(`${YOU_MUST_RUN_VERIFY_PERIODICALLY_MESSAGE}\n`);
    await modifyReassignmentThrottle(admin, proposedMoves(ongoing, assignments, current), options.throttle);
    options.out(`The inter-broker throttle limit was set to ${options.throttle} B/s\n`);
  }
  const results = await admin.alterPartitionReassignments(assignments.map((a) => ({ ...a.tp, replicas: a.replicas })), { allowReplicationFactorChange: options.allowReplicationFactorChange });
  const failed = sortedByPartition(assignments).filter((a) => results.get(topicPartitionKey(a.tp)) != null);
  if (failed.length > 0) {
    throw new ToolError(`Error reassigning partition(s):\n${failed.map((a) => `${tpText(a.tp)}: ${results.get(topicPartitionKey(a.tp))!.detail}`).join('\n')}`);
  }
  const names = sortedByPartition(assignments).map((a) => tpText(a.tp));
  options.out(`Successfully started partition reassignment${names.length === 1 ? '' : 's'} for ${names.join(',')}\n`);
}

/** Per topic and partition, the brokers a move copies from and those it copies to (Kafka's PartitionMove). */
type MoveMap = Map<string, Map<number, { sources: Set<number>; destinations: Set<number> }>>;

/** Kafka's calculateProposedMoveMap: the moves in progress, then the new ones (sources: the current replicas, or those of the move in progress). */
function proposedMoves(ongoing: readonly PartitionReassignment[], assignments: readonly Assignment[], current: readonly Assignment[]): MoveMap {
  const moves: MoveMap = new Map();
  const movesOf = (topic: string) => moves.get(topic) ?? moves.set(topic, new Map()).get(topic)!;
  for (const r of ongoing) {
    movesOf(r.topic).set(r.partition, { sources: new Set(r.replicas.filter((id) => !r.addingReplicas.includes(id))), destinations: new Set(r.addingReplicas) });
  }
  for (const { tp, replicas } of assignments) {
    const partMoves = movesOf(tp.topic);
    const sources = new Set(partMoves.get(tp.partition)?.sources ?? current.find((a) => a.tp.topic === tp.topic && a.tp.partition === tp.partition)!.replicas);
    partMoves.set(tp.partition, { sources, destinations: new Set(replicas.filter((id) => !sources.has(id))) });
  }
  return moves;
}

/**
 * Kafka's modifyReassignmentThrottle: leader.replication.throttled.replicas
 * lists each partition's sources, follower.replication.throttled.replicas
 * its destinations (as "partition:broker", sorted as text), and every
 * broker of a move gets both throttled rates.
 */
async function modifyReassignmentThrottle(admin: Admin, moves: MoveMap, throttle: number): Promise<void> {
  const entries = (topicMoves: Map<number, { sources: Set<number>; destinations: Set<number> }>, side: 'sources' | 'destinations') =>
    [...new Set([...topicMoves].flatMap(([partition, move]) => [...move[side]].filter((id) => side === 'sources' || !move.sources.has(id)).map((id) => `${partition}:${id}`)))].sort().join(',');
  await admin.alterConfigs([...moves].map(([topic, topicMoves]) => ({
    type: 'topic' as const,
    name: topic,
    ops: [
      { name: 'leader.replication.throttled.replicas', op: 'set' as const, value: entries(topicMoves, 'sources') },
      { name: 'follower.replication.throttled.replicas', op: 'set' as const, value: entries(topicMoves, 'destinations') },
    ],
  })));
  const brokers = [...new Set([...moves.values()].flatMap((topicMoves) => [...topicMoves.values()].flatMap((move) => [...move.sources, ...move.destinations])))].sort((a, b) => a - b);
  const rates = ['leader.replication.throttled.rate', 'follower.replication.throttled.rate'].map((name) => ({ name, op: 'set' as const, value: String(throttle) }));
  // One request per broker: a broker resource goes to its own broker.
  for (const id of brokers) await admin.alterConfigs([{ type: 'broker', name: String(id), ops: rates }]);
}

/** Kafka's parseExecuteAssignmentArgs checks. */
function checkExecuteAssignments(assignments: readonly Assignment[]): void {
  if (assignments.length === 0) throw new ToolError('Error: Partition reassignment list cannot be empty');
  if (assignments.some((a) => a.replicas.length === 0)) throw new ToolError('Error: Partition replica list cannot be empty');
  const repeated = duplicates(assignments.map((a) => tpText(a.tp)));
  if (repeated.length > 0) throw new ToolError(`Error: Partition reassignment contains duplicate topic partitions: ${repeated.join(',')}`);
  const withRepeats = assignments.map((a) => ({ a, repeats: duplicates(a.replicas) })).filter((entry) => entry.repeats.length > 0);
  if (withRepeats.length > 0) {
    const detail = withRepeats.map(({ a, repeats }) => `${tpText(a.tp)} contains multiple entries for ${repeats.join(',')}`).join('. ');
    throw new ToolError(`Error: Partition replica lists may not contain duplicate entries: ${detail}`);
  }
}

/** The replicas of each partition now; Kafka's "Unable to find partition" when one is missing. */
async function currentAssignmentsOf(admin: Admin, partitions: readonly TopicPartition[]): Promise<Assignment[]> {
  const topics = [...new Set(partitions.map((tp) => tp.topic))];
  const all = await currentAssignments(admin, topics).catch((error: unknown) => {
    if (error instanceof CliError) return [];
    throw error;
  });
  const byKey = new Map(all.map((a) => [topicPartitionKey(a.tp), a]));
  const missing = partitions.filter((tp) => !byKey.has(topicPartitionKey(tp)));
  if (missing.length > 0) throw new ToolError(`Error: Unable to find partition: ${missing.map(tpText).join(', ')}`);
  return partitions.map((tp) => byKey.get(topicPartitionKey(tp))!);
}

// ---- --verify, --cancel, --list

async function verifyAssignment(admin: Admin, assignments: Assignment[], options: { preserveThrottles: boolean; out: (text: string) => void }): Promise<void> {
  const ongoing = await admin.listPartitionReassignments();
  const ongoingByKey = new Map(ongoing.map((r) => [topicPartitionKey(r), r]));
  const topics = [...new Set(assignments.filter((a) => !ongoingByKey.has(topicPartitionKey(a.tp))).map((a) => a.tp.topic))];
  const known = new Set(await admin.listTopics({ listInternal: true }));
  const described = new Map((await admin.describeTopics(topics.filter((t) => known.has(t)))).map((t) => [t.name, t]));
  const lines = ['Status of partition reassignment:'];
  for (const { tp, replicas } of sortedByPartition(assignments)) {
    if (ongoingByKey.has(topicPartitionKey(tp))) {
      lines.push(`Reassignment of partition ${tpText(tp)} is still in progress.`);
      continue;
    }
    const current = described.get(tp.topic)?.partitions.find((p) => p.partition === tp.partition)?.replicas ?? [];
    if (current.length === replicas.length && current.every((r, i) => r === replicas[i])) lines.push(`Reassignment of partition ${tpText(tp)} is completed.`);
    else lines.push(`There is no active reassignment of partition ${tpText(tp)}, but replica set is ${current.join(',')} rather than ${replicas.join(',')}.`);
  }
  // The second line is the (empty) state of log directory moves, as Kafka's tool prints it.
  options.out(`${lines.join('\n')}\n\n`);
  if (ongoing.length === 0 && !options.preserveThrottles) await clearAllThrottles(brokerTarget(admin), assignments, options.out);
}

async function cancelAssignment(target: ReassignmentTarget, assignments: Assignment[], options: { preserveThrottles: boolean; out: (text: string) => void }): Promise<void> {
  const inProgress = sortedByPartition((await target.listPartitionReassignments(assignments.map((a) => a.tp))).map((r) => ({ tp: { topic: r.topic, partition: r.partition } })));
  if (inProgress.length > 0) {
    const results = await target.alterPartitionReassignments(inProgress.map((entry) => ({ ...entry.tp, replicas: null })));
    const failed = inProgress.filter((entry) => results.get(topicPartitionKey(entry.tp)) != null);
    if (failed.length > 0) {
      const detail = failed.map((entry) => `${tpText(entry.tp)}: ${results.get(topicPartitionKey(entry.tp))!.detail}`).join('\n');
      throw new ToolError(`Error cancelling partition reassignment${failed.length === 1 ? '' : 's'} for:\n${detail}`);
    }
    options.out(`Successfully cancelled partition reassignment${inProgress.length === 1 ? '' : 's'} for: ${inProgress.map((entry) => tpText(entry.tp)).join(',')}\n`);
  } else {
    options.out('None of the specified partition reassignments are active.\n');
  }
  // Kafka's tool prints this one without a line end.
  options.out('None of the specified partition moves are active.');
  if (!options.preserveThrottles) await clearAllThrottles(target, assignments, options.out);
}

/** Kafka's clearAllThrottles: the replication throttle configs deleted on every node DescribeCluster names, the file's replicas, and the file's topics. */
async function clearAllThrottles(target: ReassignmentTarget, assignments: readonly Assignment[], out: (text: string) => void): Promise<void> {
  const brokers = [...new Set([...(await target.nodeIds()), ...assignments.flatMap((a) => a.replicas)])].sort((a, b) => a - b);
  out(`Clearing broker-level throttles on broker${brokers.length === 1 ? '' : 's'} ${brokers.join(',')}\n`);
  await target.deleteConfigs(brokers.map((id) => ({ type: 'broker', name: String(id), configs: BROKER_LEVEL_THROTTLES })));
  const topics = [...new Set(assignments.map((a) => a.tp.topic))].sort();
  out(`Clearing topic-level throttles on topic${topics.length === 1 ? '' : 's'} ${topics.join(',')}\n`);
  await target.deleteConfigs(topics.map((name) => ({ type: 'topic', name, configs: TOPIC_LEVEL_THROTTLES })));
}

/** Kafka's curReassignmentsToString. */
async function currentReassignmentsText(target: ReassignmentTarget): Promise<string> {
  const ongoing = sortedByPartition((await target.listPartitionReassignments()).map((r: PartitionReassignment) => ({ tp: { topic: r.topic, partition: r.partition }, r })));
  if (ongoing.length === 0) return 'No partition reassignments found.';
  const lines = ongoing.map(({ tp, r }) => {
    const adding = r.addingReplicas.length === 0 ? '' : ` adding: ${r.addingReplicas.join(',')}.`;
    const removing = r.removingReplicas.length === 0 ? '' : ` removing: ${r.removingReplicas.join(',')}.`;
    return `${tpText(tp)}: replicas: ${r.replicas.join(',')}.${adding}${removing}`;
  });
  return `Current partition reassignments:\n${lines.join('\n')}`;
}
