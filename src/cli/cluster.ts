/**
 * `spool cluster`: kafka-cluster.sh's `cluster-id` and `unregister`, against
 * a broker (--bootstrap-server) or the controllers (--bootstrap-controller).
 *
 *   cluster-id   DescribeCluster (endpoint type 1 on a broker, 2 on a
 *                controller, KIP-919): "Cluster ID: <id>".
 *   unregister   UnregisterBroker --id N (a broker forwards it to the active
 *                controller; a controller that is not active answers
 *                NOT_CONTROLLER, and the tool asks the active one, which
 *                DescribeCluster names): "Broker N is no longer registered.",
 *                or Kafka's line for a node without the API.
 *
 * Not done: unregister-controller, list-endpoints, api-versions
 * (docs/SKIPPED.md).
 */
import type { Command } from 'commander';
import { DescribeCluster } from '../protocol/schemas/60-describe-cluster.js';
import { UnregisterBroker } from '../protocol/schemas/64-unregister-broker.js';
import { ErrorCode } from '../protocol/errors.js';
import { KafkaError } from '../client/errors.js';
import { BrokerConnection } from '../client/connection.js';
import { CliError, type CliIo } from './io.js';
import { bootstrapOptions, bootstrapTarget, connectToBootstrap, type BootstrapFlags } from './bootstrap.js';

/** How many times unregister follows NOT_CONTROLLER to the named active controller. */
const CONTROLLER_REDIRECTS_MAX = 3;

export function registerCluster(program: Command, io: CliIo): void {
  const cluster = bootstrapOptions(program.command('cluster').description('Cluster id and broker unregistration (like kafka-cluster.sh)'));
  bootstrapOptions(cluster.command('cluster-id').description('Get information about the ID of a cluster.')).action(async (_flags: BootstrapFlags, command: Command) => {
    const flags = command.optsWithGlobals<BootstrapFlags>();
    const connection = await connectToBootstrap(flags, io, 'spool-cluster');
    try {
      const described = await describeCluster(connection, bootstrapTarget(flags).controller);
      io.stdout(`Cluster ID: ${described.clusterId}\n`);
    } finally {
      await connection.close();
    }
  });
  bootstrapOptions(cluster.command('unregister').description('Unregister a broker.'))
    .requiredOption('--id <id>', 'The ID of the broker to unregister.')
    .action(async (_flags: BootstrapFlags, command: Command) => {
      const flags = command.optsWithGlobals<BootstrapFlags & { id: string }>();
      const brokerId = Number(flags.id);
      if (!Number.isInteger(brokerId)) throw new CliError(`argument --id/-i: could not convert '${flags.id}' to Integer`);
      const { errorCode, errorMessage } = await unregisterBroker(flags, io, brokerId);
      if (errorCode === ErrorCode.UNSUPPORTED_VERSION) io.stdout('The target cluster does not support the broker unregistration API.\n');
      else if (errorCode !== ErrorCode.NONE) throw new KafkaError(errorCode, errorMessage);
      else io.stdout(`Broker ${brokerId} is no longer registered.\n`);
    });
}

async function describeCluster(connection: BrokerConnection, controller: boolean) {
  const response = await connection.send(DescribeCluster, { includeClusterAuthorizedOperations: false, endpointType: controller ? 2 : 1 });
  if (response.errorCode !== ErrorCode.NONE) throw new KafkaError(response.errorCode, response.errorMessage);
  return response;
}

async function unregisterBroker(flags: BootstrapFlags, io: CliIo, brokerId: number): Promise<{ errorCode: number; errorMessage: string | null }> {
  let connection = await connectToBootstrap(flags, io, 'spool-cluster');
  try {
    for (let attempt = 0; ; attempt++) {
      if (connection.versionFor(UnregisterBroker) === null) return { errorCode: ErrorCode.UNSUPPORTED_VERSION, errorMessage: null };
      const response = await connection.send(UnregisterBroker, { brokerId });
      if (response.errorCode !== ErrorCode.NOT_CONTROLLER || !bootstrapTarget(flags).controller || attempt >= CONTROLLER_REDIRECTS_MAX) return response;
      const described = await describeCluster(connection, true);
      const active = described.brokers.find((node) => node.brokerId === described.controllerId);
      if (active === undefined) return response;
      await connection.close();
      connection = await BrokerConnection.connect({ host: active.host, port: active.port, env: io.env, clientId: 'spool-cluster' });
    }
  } finally {
    await connection.close();
  }
}
