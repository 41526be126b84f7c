/**
 * Spool nodes embedded in a Node process, for tests and tools: loopback
 * listeners on port 0 (free ports, so several nodes run in one process) and
 * Kafka's quickstart single-node settings unless `config` says otherwise.
 */
import { realEnv, type Env } from '../io/env.js';
import { BrokerConfig, SINGLE_NODE_DEFAULTS } from '../common/config.js';
import type { Logger } from '../common/logger.js';
import { SpoolNode } from './node.js';

export interface StartBrokerOptions {
  /** Kafka broker properties (`log.dirs`, `num.partitions`, `listeners`, ...). */
  config?: Record<string, string | number | boolean>;
  env?: Env;
  logger?: Logger;
}

export interface RunningBroker {
  /** `host:port` of the client listener, for a client's bootstrap.servers. */
  bootstrapServers: string;
  broker: SpoolNode;
  stop(): Promise<void>;
}

/** Starts one combined node (broker and controller). */
export async function startBroker(options: StartBrokerOptions = {}): Promise<RunningBroker> {
  const config = BrokerConfig.fromObject({
    ...SINGLE_NODE_DEFAULTS,
    listeners: 'PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0',
    ...options.config,
  });
  const broker = new SpoolNode(config, options.env ?? realEnv, options.logger);
  await broker.start();
  const client = broker.clientListener;
  return {
    bootstrapServers: `${client.advertisedHost}:${client.advertisedPort}`,
    broker,
    stop: () => broker.stop(),
  };
}
