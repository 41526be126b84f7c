/**
 * `spool api-versions`: kafka-broker-api-versions.sh. For every broker in
 * the metadata, the broker-side APIs Spool's client knows, each as
 * "Name(key): min to max [usable: v]" (or UNSUPPORTED), in Kafka's layout.
 */
import type { Command } from 'commander';
import { Cluster } from '../client/cluster.js';
import { ourVersions, type VersionSpan } from '../client/connection.js';
import { apiByKey } from '../protocol/apis.js';
import type { ApiDef } from '../protocol/schema.js';
import { DEFAULT_BOOTSTRAP_SERVER, type CliIo } from './io.js';

/** One API's entry, as Kafka's NodeApiVersions prints it. */
export function formatApiVersion(api: ApiDef, broker: VersionSpan | undefined): string {
  const head = `${api.name}(${api.key}): `;
  if (broker === undefined) return `${head}UNSUPPORTED`;
  const span = broker.min === broker.max ? `${broker.min}` : `${broker.min} to ${broker.max}`;
  const ours = ourVersions(api);
  if (ours.min > broker.max) return `${head}${span} [unusable: node too old]`;
  if (broker.min > ours.max) return `${head}${span} [unusable: node too new]`;
  return `${head}${span} [usable: ${Math.min(ours.max, broker.max)}]`;
}

/** The block for one broker. */
export function formatNodeApiVersions(node: { host: string; port: number; nodeId: number; rack: string | null }, versions: ReadonlyMap<number, VersionSpan>): string {
  const entries: string[] = [];
  for (let key = 0; key < 1000; key++) {
    const api = apiByKey(key);
    if (api !== undefined && api.listeners.includes('broker')) entries.push(formatApiVersion(api, versions.get(key)));
  }
  return `${node.host}:${node.port} (id: ${node.nodeId} rack: ${node.rack ?? 'null'} isFenced: false) -> (\n\t${entries.join(',\n\t')}\n)\n`;
}

export function registerApiVersions(program: Command, io: CliIo): void {
  program
    .command('api-versions')
    .description('Print the API versions each broker serves (like kafka-broker-api-versions.sh)')
    .option('--bootstrap-server <server>', 'the broker to connect to', DEFAULT_BOOTSTRAP_SERVER)
    .action(async (flags: { bootstrapServer: string }) => {
      const cluster = new Cluster({ bootstrapServers: flags.bootstrapServer, env: io.env, clientId: 'spool-api-versions' });
      try {
        await cluster.retry(() => cluster.refreshMetadata([]), { timeoutMs: cluster.requestTimeoutMs });
        for (const broker of [...cluster.brokers.values()].sort((a, b) => a.nodeId - b.nodeId)) {
          const connection = await cluster.connectTo(broker.host, broker.port);
          io.stdout(formatNodeApiVersions(broker, connection.apiVersions));
        }
      } finally {
        await cluster.close();
      }
    });
}
