/**
 * Where `spool reassign-partitions` sends its requests: through the brokers
 * (--bootstrap-server, Spool's Admin client, the brokers forwarding to the
 * active controller), or to the controllers themselves
 * (--bootstrap-controller, for --list and --cancel, as Kafka's tool allows).
 * Both offer what those actions need: the reassignment calls, the node ids
 * DescribeCluster names (brokers, or controllers), and deleting configs
 * (the replication throttles).
 */
import { Admin, AlterConfigOp, ConfigResourceType } from '../client/admin.js';
import { BrokerConnection } from '../client/connection.js';
import { KafkaError, NetworkError, throwIfError } from '../client/errors.js';
import { alterPartitionReassignments, listPartitionReassignments, type ControllerLink, type PartitionReassignment } from '../client/reassignment-admin.js';
import { ErrorCode } from '../protocol/errors.js';
import { DescribeCluster } from '../protocol/schemas/60-describe-cluster.js';
import { IncrementalAlterConfigs } from '../protocol/schemas/44-incremental-alter-configs.js';
import type { TopicPartition } from '../protocol/topic-partition.js';
import type { CliIo } from './io.js';

/** DescribeCluster's endpointType for controllers (KIP-919). */
const CONTROLLER_ENDPOINT_TYPE = 2;
/** How many times each --bootstrap-controller address is tried before the last error is the answer. */
const CONTROLLER_ROUNDS_MAX = 5;

export interface ConfigDeletion {
  type: 'broker' | 'topic';
  name: string;
  configs: readonly string[];
}

export interface ReassignmentTarget {
  listPartitionReassignments(partitions?: readonly TopicPartition[]): Promise<PartitionReassignment[]>;
  alterPartitionReassignments(reassignments: readonly (TopicPartition & { replicas: readonly number[] | null })[]): Promise<Map<string, KafkaError | null>>;
  /** The nodes DescribeCluster names: brokers, or controllers when talking to them. */
  nodeIds(): Promise<number[]>;
  deleteConfigs(deletions: readonly ConfigDeletion[]): Promise<void>;
}

/** Through the brokers, with Spool's Admin client. */
export function brokerTarget(admin: Admin): ReassignmentTarget {
  return {
    listPartitionReassignments: (partitions) => admin.listPartitionReassignments(partitions),
    alterPartitionReassignments: (reassignments) => admin.alterPartitionReassignments(reassignments),
    nodeIds: async () => (await admin.describeCluster()).brokers.map((broker) => broker.nodeId),
    async deleteConfigs(deletions) {
      // One request per broker resource: it goes to its own broker.
      const asOps = (d: ConfigDeletion) => ({ type: d.type, name: d.name, ops: d.configs.map((name) => ({ name, op: 'delete' as const })) });
      for (const broker of deletions.filter((d) => d.type === 'broker')) await admin.alterConfigs([asOps(broker)]);
      const topics = deletions.filter((d) => d.type === 'topic');
      if (topics.length > 0) await admin.alterConfigs(topics.map(asOps));
    },
  };
}

/** To the controllers at `addresses`: each request goes to the one that is active. */
export function controllerTarget(addresses: readonly { host: string; port: number }[], io: CliIo): ReassignmentTarget {
  const link = controllerLink(addresses, io);
  return {
    listPartitionReassignments: (partitions) => listPartitionReassignments(link, partitions),
    alterPartitionReassignments: (reassignments) => alterPartitionReassignments(link, reassignments),
    async nodeIds() {
      const response = await link.retry((connection) => connection.send(DescribeCluster, { includeClusterAuthorizedOperations: false, endpointType: CONTROLLER_ENDPOINT_TYPE }));
      throwIfError(response.errorCode, response.errorMessage ?? 'DescribeCluster');
      return response.brokers.map((node) => node.brokerId);
    },
    async deleteConfigs(deletions) {
      const response = await link.retry(async (connection) => {
        const answer = await connection.send(IncrementalAlterConfigs, {
          resources: deletions.map((d) => ({
            resourceType: ConfigResourceType[d.type],
            resourceName: d.name,
            configs: d.configs.map((name) => ({ name, configOperation: AlterConfigOp.delete, value: null })),
          })),
          validateOnly: false,
        });
        if (answer.responses.some((r) => r.errorCode === ErrorCode.NOT_CONTROLLER)) throw new KafkaError(ErrorCode.NOT_CONTROLLER, null);
        return answer;
      });
      for (const result of response.responses) throwIfError(result.errorCode, result.errorMessage ?? result.resourceName);
    },
  };
}

/** Each address in turn (a fresh connection per attempt) until one answers as the active controller. */
function controllerLink(addresses: readonly { host: string; port: number }[], io: CliIo): ControllerLink {
  return {
    async retry(operation) {
      let lastError: Error = new NetworkError('no --bootstrap-controller address');
      for (let round = 0; round < CONTROLLER_ROUNDS_MAX; round++) {
        for (const { host, port } of addresses) {
          let connection: BrokerConnection;
          try {
            connection = await BrokerConnection.connect({ host, port, env: io.env, clientId: 'reassign-partitions-tool' });
          } catch (error) {
            lastError = error as Error;
            continue;
          }
          try {
            return await operation(connection);
          } catch (error) {
            const retriable = error instanceof NetworkError || (error instanceof KafkaError && error.code === ErrorCode.NOT_CONTROLLER);
            if (!retriable) throw error;
            lastError = error;
          } finally {
            await connection.close();
          }
        }
      }
      throw lastError;
    },
  };
}
