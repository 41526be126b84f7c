/**
 * `spool doctor`'s engine: looks at the cluster twice, `sampleMs` apart,
 * runs every check (doctor-checks.ts) over the two samples and returns
 * the findings and the gaps. Printing is the CLI's (src/cli/doctor.ts).
 *
 * Sources, all Kafka APIs through Spool's admin client, except one:
 * DescribeCluster (v2, fenced brokers too), Metadata and
 * DescribeTopicPartitions, DescribeConfigs (topics' effective
 * min.insync.replicas and throttled replicas; each broker's throttle rates
 * and console.listener), ListOffsets (read_uncommitted and read_committed),
 * ListOffsets and Fetch as a debugging replica (log end offsets),
 * DescribeProducers, ListTransactions, DescribeTransactions, ListGroups,
 * DescribeGroups / ConsumerGroupDescribe, OffsetFetch, DescribeLogDirs and
 * DescribeQuorum. The exception: the leader's view of its followers' log
 * end offsets is not in the Kafka protocol; it comes from the web
 * console's JSON API on the leader's `console.listener`
 * (GET /api/topics/:topic/partitions/:p, its replicaStates), and without
 * it each follower's own log end offset stands in (a gap says so).
 */
import type { Admin } from '../client/admin.js';
import { BrokerConnection } from '../client/connection.js';
import { KafkaError } from '../client/errors.js';
import { ErrorCode, errorInfo } from '../protocol/errors.js';
import { DescribeCluster } from '../protocol/schemas/60-describe-cluster.js';
import { DescribeQuorum } from '../protocol/schemas/55-describe-quorum.js';
import type { ResponseOf } from '../protocol/schema.js';
import type { JsonGet } from '../io/http-get.js';
import {
  checkConsumerLag,
  checkFencedBrokers,
  checkMinInsyncReplicas,
  checkOfflineLogDirs,
  checkOfflinePartitions,
  checkOpenTransactions,
  checkRebalances,
  checkReplicationThrottles,
  checkStuckHighWatermark,
  checkUnreachableBrokers,
  checkUnderReplicated,
  type BrokerConfigs,
  type ReplicaState,
  type ReplicaViews,
  type TopicConfigs,
} from './doctor-checks.js';
import { sortFindings, type DoctorReport, type Finding } from './doctor-findings.js';
import { takeSample, type PartitionSample, type Sample } from './doctor-sample.js';

export const DOCTOR_SAMPLE_MS_DEFAULT = 2000;
/** How long a console API request may take. */
const CONSOLE_TIMEOUT_MS = 5000;
/** DescribeCluster's endpoint type for controllers (KIP-919). */
const CONTROLLER_ENDPOINTS = 2;
const METADATA_TOPIC = '__cluster_metadata';

export const DOCTOR_STANDING_GAPS = [
  'client quotas: not checked (a client throttled by its producer_byte_rate or consumer_byte_rate is not reported); replication throttles are checked',
] as const;

export interface DoctorOptions {
  /** Only these topics (null: all, internal ones too). */
  topics: readonly string[] | null;
  /** Only these consumer groups (null: all). */
  groups: readonly string[] | null;
  sampleMs: number;
  /** --bootstrap-controller: controllers to ask for DescribeQuorum; null to ask the brokers. */
  controllers: readonly { host: string; port: number }[] | null;
  getJson: JsonGet;
}

function sleep(admin: Admin, ms: number): Promise<void> {
  return new Promise((resolve) => admin.cluster.env.timers.schedule(ms, resolve));
}

async function topicConfigsOf(admin: Admin, topics: readonly string[]): Promise<Map<string, TopicConfigs>> {
  const names = ['min.insync.replicas', 'leader.replication.throttled.replicas', 'follower.replication.throttled.replicas'];
  const described = await admin.describeConfigs(topics.map((name) => ({ type: 'topic' as const, name })), { configNames: names });
  const value = (configs: readonly { name: string; value: string | null }[], name: string) => configs.find((c) => c.name === name)?.value ?? '';
  return new Map(described.map((d) => [d.name, {
    minInsyncReplicas: Number(value(d.configs, 'min.insync.replicas') || 1),
    leaderThrottledReplicas: value(d.configs, 'leader.replication.throttled.replicas'),
    followerThrottledReplicas: value(d.configs, 'follower.replication.throttled.replicas'),
  }]));
}

async function brokerConfigsOf(admin: Admin, brokerIds: readonly number[], gaps: string[]): Promise<BrokerConfigs[]> {
  const names = ['console.listener', 'leader.replication.throttled.rate', 'follower.replication.throttled.rate'];
  const out: BrokerConfigs[] = [];
  for (const brokerId of brokerIds) {
    try {
      const [described] = await admin.describeConfigs([{ type: 'broker', name: String(brokerId) }], { configNames: names });
      const value = (name: string) => described?.configs.find((c) => c.name === name)?.value ?? null;
      out.push({ brokerId, consoleListener: value('console.listener'), leaderThrottledRate: value('leader.replication.throttled.rate'), followerThrottledRate: value('follower.replication.throttled.rate') });
    } catch (error) {
      if (!(error instanceof KafkaError)) throw error;
      gaps.push(`broker ${brokerId}: DescribeConfigs failed (${error.message}); its throttles and console are not known`);
    }
  }
  return out;
}

/** The console's base URL of a broker, or why there is none. */
function consoleBase(broker: BrokerConfigs | undefined, advertisedHost: string | undefined): string | { unavailable: string } {
  const listener = broker?.consoleListener ?? null;
  if (listener === null || listener === '') return { unavailable: 'console.listener is not set' };
  const match = /^http:\/\/(\[[^\]]*\]|[^:/]*):(\d+)\/?$/.exec(listener.trim());
  if (match === null) return { unavailable: `console.listener ${listener} is not http://host:port` };
  if (match[2] === '0') return { unavailable: `console.listener ${listener} binds a random port that is not advertised` };
  const host = match[1] === '' || match[1] === '0.0.0.0' || match[1] === '[::]' ? (advertisedHost ?? 'localhost') : match[1]!;
  return `http://${host}:${match[2]}`;
}

function replicaStatesOf(body: unknown): ReplicaState[] | null {
  const states = (body as { replicaStates?: unknown } | null)?.replicaStates;
  if (!Array.isArray(states)) return null;
  const valid = states.every((s: unknown) => typeof s === 'object' && s !== null && typeof (s as ReplicaState).brokerId === 'number' && typeof (s as ReplicaState).logEndOffset === 'number');
  return valid ? (states as ReplicaState[]) : null;
}

function replicaViews(admin: Admin, options: DoctorOptions, brokers: readonly BrokerConfigs[], hosts: ReadonlyMap<number, string>): ReplicaViews {
  return {
    async leaderView(partition: PartitionSample) {
      const base = consoleBase(brokers.find((b) => b.brokerId === partition.leader), hosts.get(partition.leader));
      if (typeof base !== 'string') return base;
      const url = `${base}/api/topics/${encodeURIComponent(partition.topic)}/partitions/${partition.partition}`;
      try {
        const replicas = replicaStatesOf(await options.getJson(url, { timeoutMs: CONSOLE_TIMEOUT_MS }));
        return replicas === null ? { unavailable: `${url} answered without replicaStates` } : { replicas, nowMs: admin.cluster.env.clock.nowMs() };
      } catch (error) {
        return { unavailable: (error as Error).message };
      }
    },
    async followerLogEnd(partition: PartitionSample, brokerId: number) {
      const offsets = await admin.describeReplicaOffsets(partition, brokerId).catch((error: unknown) => {
        if (error instanceof KafkaError) return error.errorName;
        throw error;
      });
      if (typeof offsets === 'string') return offsets;
      return offsets.errorCode === ErrorCode.NONE ? offsets.logEndOffset : errorInfo(offsets.errorCode).name;
    },
  };
}

type QuorumPartition = ResponseOf<typeof DescribeQuorum>['topics'][number]['partitions'][number];

function quorumFinding(partition: QuorumPartition, askedWhom: string): Finding[] {
  if (partition.leaderId >= 0) return [];
  return [{
    check: 'controller-quorum',
    severity: 'critical',
    subject: 'quorum',
    message: `the KRaft controller quorum has no leader (asked ${askedWhom}): no metadata change (topics, ISR, leaders) can be made`,
    evidence: { leaderId: partition.leaderId, leaderEpoch: partition.leaderEpoch, voters: partition.currentVoters.map((v) => v.replicaId) },
  }];
}

async function describeQuorumAt(connection: BrokerConnection): Promise<QuorumPartition | KafkaError> {
  const response = await connection.send(DescribeQuorum, { topics: [{ topicName: METADATA_TOPIC, partitions: [{ partitionIndex: 0 }] }] });
  if (response.errorCode !== ErrorCode.NONE) return new KafkaError(response.errorCode, response.errorMessage);
  const partition = response.topics[0]?.partitions[0];
  if (partition === undefined) return new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, 'DescribeQuorum answered without the metadata partition');
  return partition.errorCode === ErrorCode.NONE ? partition : new KafkaError(partition.errorCode, partition.errorMessage);
}

/** Whether a controller accepts a connection (the error's message when not). */
async function reachable(admin: Admin, controller: { host: string; port: number }): Promise<true | string> {
  try {
    const connection = await BrokerConnection.connect({ host: controller.host, port: controller.port, env: admin.cluster.env, clientId: 'spool-doctor' });
    await connection.close();
    return true;
  } catch (error) {
    if (!(error instanceof KafkaError)) throw error;
    return error.message;
  }
}

/**
 * A controller that knows no active controller: the quorum has no leader.
 * Each controller it lists is tried, so the finding names those that do not
 * answer (a quorum elects a leader only with a majority of its voters).
 */
async function leaderlessQuorum(admin: Admin, seen: { asked: string; controllerId: number; controllers: readonly { brokerId: number; host: string; port: number }[] }): Promise<Finding> {
  const unreachable: number[] = [];
  for (const controller of seen.controllers) if ((await reachable(admin, controller)) !== true) unreachable.push(controller.brokerId);
  const ids = seen.controllers.map((c) => c.brokerId);
  const majority = Math.floor(ids.length / 2) + 1;
  const up = ids.length - unreachable.length;
  return {
    check: 'controller-quorum',
    severity: 'critical',
    subject: 'quorum',
    message: `controller ${seen.asked} knows no active controller: the quorum has no leader (${up} of ${ids.length} controllers answer, a majority is ${majority}${unreachable.length > 0 ? `; not answering: ${unreachable.join(', ')}` : ''}): no metadata change (topics, ISR, leaders) can be made`,
    evidence: { askedController: seen.asked, controllerId: seen.controllerId, controllers: ids, unreachableControllers: unreachable, majority },
  };
}

/** As kafka-metadata-quorum --bootstrap-controller: DescribeCluster names the active controller, which answers DescribeQuorum. */
async function checkQuorumAtControllers(admin: Admin, controllers: readonly { host: string; port: number }[]): Promise<Finding[]> {
  const errors: string[] = [];
  for (const { host, port } of controllers) {
    let connection: BrokerConnection | null = null;
    try {
      connection = await BrokerConnection.connect({ host, port, env: admin.cluster.env, clientId: 'spool-doctor' });
      const cluster = await connection.send(DescribeCluster, { endpointType: CONTROLLER_ENDPOINTS, includeClusterAuthorizedOperations: false });
      if (cluster.errorCode !== ErrorCode.NONE) throw new KafkaError(cluster.errorCode, cluster.errorMessage);
      const active = cluster.brokers.find((b) => b.brokerId === cluster.controllerId);
      if (active === undefined) return [await leaderlessQuorum(admin, { asked: `${host}:${port}`, controllerId: cluster.controllerId, controllers: cluster.brokers })];
      await connection.close();
      connection = await BrokerConnection.connect({ host: active.host, port: active.port, env: admin.cluster.env, clientId: 'spool-doctor' });
      const partition = await describeQuorumAt(connection);
      if (partition instanceof KafkaError) throw partition;
      return quorumFinding(partition, `controller ${active.brokerId}`);
    } catch (error) {
      if (!(error instanceof KafkaError)) throw error;
      errors.push(`${host}:${port}: ${error.message}`);
    } finally {
      await connection?.close();
    }
  }
  return [{ check: 'controller-quorum', severity: 'critical', subject: 'quorum', message: 'no controller answered DescribeQuorum', evidence: { errors } }];
}

/**
 * The quorum leader's DescribeQuorum. Through --bootstrap-controller as
 * kafka-metadata-quorum does; else each broker is asked (a combined node
 * that leads answers; Spool's broker-only nodes do not forward it).
 */
export async function checkControllerQuorum(admin: Admin, options: { controllers: DoctorOptions['controllers']; brokerIds: readonly number[] }, gaps: string[]): Promise<Finding[]> {
  if (options.controllers !== null) return checkQuorumAtControllers(admin, options.controllers);
  const errors: string[] = [];
  for (const brokerId of options.brokerIds) {
    const partition = await admin.cluster.connection(brokerId).then(describeQuorumAt, (error: unknown) => {
      if (error instanceof KafkaError) return error;
      throw error;
    });
    if (!(partition instanceof KafkaError)) return quorumFinding(partition, `broker ${brokerId}`);
    errors.push(`broker ${brokerId}: ${partition.errorName}`);
  }
  gaps.push(`controller-quorum: no broker asked leads the quorum or forwards DescribeQuorum (${errors.join(', ')}); pass --bootstrap-controller to check it`);
  return [];
}

async function replicationChecks(admin: Admin, samples: { first: Sample; second: Sample }, context: { options: DoctorOptions; brokers: BrokerConfigs[]; hosts: Map<number, string>; gaps: string[] }): Promise<Finding[]> {
  const { first, second } = samples;
  const topicConfigs = await topicConfigsOf(admin, [...new Set([...second.partitions.values()].map((p) => p.topic))]);
  return [
    ...checkOfflinePartitions(second),
    ...checkUnderReplicated(second),
    ...checkMinInsyncReplicas(second, topicConfigs),
    ...checkReplicationThrottles(second, topicConfigs, context.brokers),
    ...(await checkStuckHighWatermark(first, second, replicaViews(admin, context.options, context.brokers, context.hosts), context.gaps)),
  ];
}

export async function runDoctor(admin: Admin, options: DoctorOptions): Promise<DoctorReport> {
  const gaps: string[] = [...DOCTOR_STANDING_GAPS];
  const cluster = await admin.describeCluster({ includeFencedBrokers: true });
  const { reachable: live, findings: unreachable } = await checkUnreachableBrokers(admin, cluster.brokers);
  if (options.groups === null && unreachable.length > 0) gaps.push(`consumer-lag, rebalance: the groups that unreachable brokers coordinate are not listed`);
  const scope = { topics: options.topics, groups: options.groups, reachableBrokerIds: live };
  const first = await takeSample(admin, scope);
  await sleep(admin, options.sampleMs);
  const second = await takeSample(admin, scope);
  const brokers = await brokerConfigsOf(admin, live, gaps);
  const hosts = new Map(cluster.brokers.map((b) => [b.nodeId, b.host]));
  const findings: Finding[] = [
    ...(await replicationChecks(admin, { first, second }, { options, brokers, hosts, gaps })),
    ...(await checkOpenTransactions(admin, first, second)),
    ...checkConsumerLag(first, second),
    ...checkRebalances(first, second),
    ...(await checkOfflineLogDirs(admin, second, { brokerIds: live, gaps })),
    ...checkFencedBrokers(second, cluster.brokers),
    ...unreachable,
    ...(await checkControllerQuorum(admin, { controllers: options.controllers, brokerIds: live }, gaps)),
  ];
  return { sampleMs: options.sampleMs, findings: sortFindings(findings), gaps };
}
