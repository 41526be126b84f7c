/**
 * The `--bootstrap-server` / `--bootstrap-controller` pair of Kafka's
 * cluster tools (kafka-features.sh, kafka-cluster.sh): one of the two,
 * never both (Kafka's messages). With neither, Spool's tools default to a
 * broker on 127.0.0.1:9092, as its other commands do.
 */
import type { Command } from 'commander';
import { BrokerConnection } from '../client/connection.js';
import { parseBootstrapServers } from '../client/cluster.js';
import { CliError, DEFAULT_BOOTSTRAP_SERVER, type CliIo } from './io.js';

export interface BootstrapFlags {
  bootstrapServer?: string;
  bootstrapController?: string;
}

/** Adds both options to `command` (tools accept them before or after their subcommand). */
export function bootstrapOptions(command: Command): Command {
  return command
    .option('--bootstrap-server <server>', 'a list of host:port pairs of brokers to connect to')
    .option('--bootstrap-controller <controller>', 'a list of host:port pairs of KRaft controllers to connect to');
}

/** Which addresses the flags name, and whether they are controllers. */
export function bootstrapTarget(flags: BootstrapFlags): { controller: boolean; addresses: { host: string; port: number }[] } {
  if (flags.bootstrapServer !== undefined && flags.bootstrapController !== undefined) {
    throw new CliError('You cannot specify both --bootstrap-controller and --bootstrap-server.');
  }
  if (flags.bootstrapController !== undefined) return { controller: true, addresses: parseBootstrapServers(flags.bootstrapController) };
  return { controller: false, addresses: parseBootstrapServers(flags.bootstrapServer ?? DEFAULT_BOOTSTRAP_SERVER) };
}

/** A connection to the first address that answers. */
export async function connectToBootstrap(flags: BootstrapFlags, io: CliIo, clientId: string): Promise<BrokerConnection> {
  const { addresses } = bootstrapTarget(flags);
  let lastError: Error | null = null;
  for (const { host, port } of addresses) {
    try {
      return await BrokerConnection.connect({ host, port, env: io.env, clientId });
    } catch (error) {
      lastError = error as Error;
    }
  }
  throw new CliError(`cannot reach ${addresses.map((a) => `${a.host}:${a.port}`).join(',')}: ${lastError?.message ?? 'no address'}`);
}
