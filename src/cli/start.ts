/**
 * `spool start [server.properties] [--override key=value]...`: runs one
 * node, as kafka-server-start.sh does. Properties come from the file (if
 * any), then the overrides; Kafka's defaults fill the rest (one combined
 * broker+controller, PLAINTEXT on 127.0.0.1:9092, data in ./data). Prints
 * one line once the node serves, and stops cleanly on SIGTERM or SIGINT.
 * Without a file, the settings of Kafka's shipped quickstart server.properties
 * apply (SINGLE_NODE_DEFAULTS), so groups and transactions work on one node.
 * `--console` turns on the web console at CONSOLE_DEFAULT_LISTENER unless
 * console.listener is set.
 * `--metrics` serves GET /metrics on METRICS_LISTENER_DEFAULT unless
 * metrics.listener is set (9404 is the JMX exporter's customary port).
 */
import type { Command } from 'commander';
import { BrokerConfig, ConfigError, SINGLE_NODE_DEFAULTS, parseProperties } from '../common/config.js';
import { CliError, collect, parseKeyValues, type CliIo } from './io.js';

/** Where `spool start --console` serves the web console when console.listener is not set. */
export const CONSOLE_DEFAULT_LISTENER = 'http://127.0.0.1:9500';
/** Where `spool start --metrics` serves /metrics when metrics.listener is not set. */
export const METRICS_LISTENER_DEFAULT = 'http://127.0.0.1:9404';

/** The explicit properties of `spool start`: file first, overrides last. */
export async function loadStartProperties(io: CliIo, file: string | undefined, overrides: readonly string[]): Promise<Map<string, string>> {
  const properties = new Map<string, string>(file === undefined ? Object.entries(SINGLE_NODE_DEFAULTS) : []);
  if (file !== undefined) {
    let text: string;
    try {
      text = (await io.env.fs.readFile(file)).toString('utf8');
    } catch (error) {
      throw new CliError(`Cannot read ${file}: ${(error as Error).message}`);
    }
    for (const [key, value] of parseProperties(text)) properties.set(key, value);
  }
  for (const [key, value] of parseKeyValues(overrides)) properties.set(key, value);
  return properties;
}

/** `--console`: console.listener becomes CONSOLE_DEFAULT_LISTENER unless the file or an override set it. */
export function setConsoleDefault(properties: Map<string, string>): void {
  if ((properties.get('console.listener') ?? '') === '') properties.set('console.listener', CONSOLE_DEFAULT_LISTENER);
}

/** `--metrics`: metrics.listener as given, else METRICS_LISTENER_DEFAULT. */
export function applyMetricsFlag(properties: Map<string, string>, flags: { metrics?: boolean }): void {
  if (flags.metrics === true && !properties.has('metrics.listener')) properties.set('metrics.listener', METRICS_LISTENER_DEFAULT);
}

export function registerStart(program: Command, io: CliIo): void {
  program
    .command('start')
    .description('Start a Spool node (like kafka-server-start.sh)')
    .argument('[server.properties]', 'a Kafka server.properties file')
    .option('--override <key=value>', 'a property that overrides the file (repeatable)', collect, [])
    .option('--console', `serve the web console (console.listener, ${CONSOLE_DEFAULT_LISTENER} unless set)`)
    .option('--metrics', `serve Prometheus metrics at /metrics (metrics.listener, default ${METRICS_LISTENER_DEFAULT})`)
    .action(async (file: string | undefined, flags: { override: string[]; console?: boolean; metrics?: boolean }) => {
      const properties = await loadStartProperties(io, file, flags.override);
      if (flags.console === true) setConsoleDefault(properties);
      applyMetricsFlag(properties, flags);
      // Loaded here so the client-side commands do not load the broker.
      const { SpoolNode, ListenerBindError } = await import('../node/node.js');
      let broker: InstanceType<typeof SpoolNode>;
      try {
        broker = new SpoolNode(new BrokerConfig(properties), io.env);
      } catch (error) {
        if (error instanceof ConfigError) throw new CliError(error.message);
        throw error;
      }
      const config = broker.config;
      try {
        await broker.start();
      } catch (error) {
        if (error instanceof ConfigError || error instanceof ListenerBindError) throw new CliError(error.message);
        throw error;
      }
      const listener = broker.clientListener;
      // The signal handlers are in place before the node says it is ready, so a stop right after that is clean.
      const signalled = io.untilSignal().then(() => null);
      io.stdout(`Spool started: ${listener.name}://${listener.advertisedHost}:${listener.advertisedPort} (node ${broker.nodeId}, data in ${config.logDirs.join(',')})\n`);
      const consoleAddress = broker.consoleListener;
      if (consoleAddress !== null) io.stdout(`Spool console: http://${consoleAddress.host || '127.0.0.1'}:${consoleAddress.port}/\n`);
      const metrics = broker.metricsListener;
      if (metrics !== null) io.stdout(`Metrics: http://${metrics.host || '0.0.0.0'}:${metrics.port}/metrics\n`);
      const halted = await Promise.race([signalled, broker.halted]);
      await broker.stop();
      if (halted !== null) throw new CliError(`Spool stopped: ${halted}`);
    });
}
