/**
 * `spool storage`: kafka-storage.sh.
 *   random-uuid   prints a new cluster id
 *   format        formats the log directories of a server.properties
 *                 (src/node/formatter.ts): --cluster-id/-t, --config/-c,
 *                 --standalone/-s | --initial-controllers/-I |
 *                 --no-initial-controllers/-N, --ignore-formatted/-g,
 *                 --release-version/-r, --feature/-f name=level (repeatable),
 *                 --add-scram/-S 'SCRAM-SHA-256=[name=..,password=..]' (repeatable)
 * Not done: `info`, `version-mapping`,
 * `feature-dependencies`.
 */
import type { Command } from 'commander';
import { BrokerConfig, ConfigError, parseProperties } from '../common/config.js';
import { randomUuid } from '../metadata/meta-properties.js';
import { FormatterError, formatStorage, parseInitialControllers, type InitialVoters } from '../node/formatter.js';
import { CliError, collect, parseKeyValues, type CliIo } from './io.js';

interface FormatFlags {
  config: string;
  clusterId: string;
  standalone?: boolean;
  /** A list with --initial-controllers, false with --no-initial-controllers (commander's negation of the same option). */
  initialControllers?: string | false;
  ignoreFormatted?: boolean;
  releaseVersion?: string;
  feature: string[];
  addScram: string[];
}

export function registerStorage(program: Command, io: CliIo): void {
  const storage = program.command('storage').description('Format log directories and make cluster ids (like kafka-storage.sh)');
  storage
    .command('random-uuid')
    .description('Print a random UUID, for a new cluster id')
    .action(() => io.stdout(`${randomUuid(io.env.random)}\n`));
  storage
    .command('format')
    .description('Format the log directories of a node')
    .requiredOption('-c, --config <file>', 'the server.properties file of the node')
    .requiredOption('-t, --cluster-id <id>', 'the cluster id to use')
    .option('-s, --standalone', 'initialize a controller as a single-node dynamic quorum')
    .option('-I, --initial-controllers <list>', 'the initial dynamic quorum: id@hostname:port:directory.id,...')
    .option('-N, --no-initial-controllers', 'initialize a node without specifying a dynamic quorum')
    .option('-g, --ignore-formatted', 'skip directories that are already formatted')
    .option('-r, --release-version <version>', 'the metadata.version to start at (e.g. 4.0-IV3)')
    .option('-f, --feature <name=level>', 'the level of a feature (repeatable)', collect, [])
    .option('-S, --add-scram <credential>', "a SCRAM credential for the metadata log, e.g. 'SCRAM-SHA-256=[name=alice,password=alice-secret]' (repeatable)", collect, [])
    .action(async (flags: FormatFlags) => {
      const config = await loadConfig(io, flags.config);
      try {
        const lines = await formatStorage(io.env, config, {
          clusterId: flags.clusterId,
          ...(flags.releaseVersion === undefined ? {} : { releaseVersion: flags.releaseVersion }),
          features: featureLevels(flags.feature),
          initialVoters: initialVoters(flags),
          ignoreFormatted: flags.ignoreFormatted === true,
          scram: flags.addScram,
        });
        for (const line of lines) io.stdout(`${line}\n`);
      } catch (error) {
        if (error instanceof FormatterError || error instanceof ConfigError) throw new CliError(error.message);
        throw error;
      }
    });
}

async function loadConfig(io: CliIo, file: string): Promise<BrokerConfig> {
  let text: string;
  try {
    text = (await io.env.fs.readFile(file)).toString('utf8');
  } catch (error) {
    throw new CliError(`Cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    return new BrokerConfig(parseProperties(text));
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(error.message);
    throw error;
  }
}

/** At most one of --standalone, --initial-controllers, --no-initial-controllers. */
function initialVoters(flags: FormatFlags): InitialVoters {
  if (flags.standalone === true && flags.initialControllers !== undefined) {
    throw new CliError('argument --standalone/-s: not allowed with argument --initial-controllers/-I or --no-initial-controllers/-N');
  }
  if (flags.standalone === true) return { kind: 'standalone' };
  if (typeof flags.initialControllers === 'string') {
    try {
      return { kind: 'initial', controllers: parseInitialControllers(flags.initialControllers) };
    } catch (error) {
      throw new CliError((error as Error).message);
    }
  }
  if (flags.initialControllers === false) return { kind: 'none' };
  return { kind: 'static' };
}

function featureLevels(entries: readonly string[]): Map<string, number> {
  const levels = new Map<string, number>();
  for (const [name, level] of parseKeyValues(entries)) {
    if (!/^\d+$/.test(level.trim())) throw new CliError(`Invalid feature level ${level} for ${name}`);
    levels.set(name.trim(), Number(level));
  }
  return levels;
}
