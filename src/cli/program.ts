/**
 * The `spool` command line: one commander program with a subcommand per
 * tool. runCli() parses arguments, runs the command against the given
 * CliIo and returns the exit code (1 on a CliError or Kafka error, with the
 * message on stderr; commander's own usage errors keep their codes).
 */
import { Command, CommanderError } from 'commander';
import { CLIENT_SOFTWARE_VERSION } from '../client/connection.js';
import { KafkaError } from '../client/errors.js';
import { registerAcls } from './acls.js';
import { registerApiVersions } from './api-versions.js';
import { registerCluster } from './cluster.js';
import { registerConfigs } from './configs.js';
import { registerConsume } from './consume.js';
import { registerConsumerGroups } from './consumer-groups.js';
import { registerDoctor } from './doctor.js';
import { registerDumpLog } from './dump-log.js';
import { registerFeatures } from './features.js';
import { registerGetOffsets } from './get-offsets.js';
import { registerMetadataQuorum } from './metadata-quorum.js';
import { CliError, type CliIo } from './io.js';
import { registerProduce } from './produce.js';
import { registerShareGroups } from './share-groups.js';
import { registerReassignPartitions } from './reassign-partitions.js';
import { registerLeaderElection } from './leader-election.js';
import { registerStart } from './start.js';
import { registerStorage } from './storage.js';
import { registerTopics } from './topics.js';
import { registerTransactions } from './transactions.js';

export function buildProgram(io: CliIo): Command {
  const program = new Command('spool')
    .description('Spool: Apache Kafka, rebuilt in TypeScript')
    .version(CLIENT_SOFTWARE_VERSION)
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ writeOut: (text) => io.stdout(text), writeErr: (text) => io.stderr(text) });
  registerStart(program, io);
  registerStorage(program, io);
  registerTopics(program, io);
  registerProduce(program, io);
  registerConsume(program, io);
  registerConsumerGroups(program, io);
  registerShareGroups(program, io);
  registerGetOffsets(program, io);
  registerConfigs(program, io);
  registerReassignPartitions(program, io);
  registerLeaderElection(program, io);
  registerAcls(program, io);
  registerApiVersions(program, io);
  registerDumpLog(program, io);
  registerFeatures(program, io);
  registerCluster(program, io);
  registerMetadataQuorum(program, io);
  registerTransactions(program, io);
  registerDoctor(program, io);
  const configure = (commands: readonly Command[]): void => {
    for (const command of commands) {
      command.exitOverride().configureOutput({ writeOut: (text) => io.stdout(text), writeErr: (text) => io.stderr(text) });
      configure(command.commands);
    }
  };
  configure(program.commands);
  return program;
}

/** Runs `spool <args>`; resolves with the exit code. */
export async function runCli(args: readonly string[], io: CliIo): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync([...args], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    if (error instanceof CliError) {
      io.stderr(`${error.message}\n`);
      return error.exitCode;
    }
    if (error instanceof KafkaError) {
      io.stderr(`${error.message}\n`);
      return 1;
    }
    throw error;
  }
}
