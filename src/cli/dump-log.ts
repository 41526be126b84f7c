/**
 * `spool dump-log`: kafka-dump-log.sh over Spool's storage reader
 * (src/storage/dump-log.ts, written with the storage layer). Until that
 * module exists the command says so and exits 1.
 */
import type { Command } from 'commander';
import { CliError, type CliIo } from './io.js';

interface DumpLogFlags {
  files: string;
  printDataLog?: boolean;
  deepIteration?: boolean;
  verifyIndexOnly?: boolean;
}

/** The storage module's entry point as this command expects it. */
type DumpLogModule = { dumpLog?: (options: { files: string[]; printDataLog: boolean; deepIteration: boolean; verifyIndexOnly: boolean; write(text: string): void }) => Promise<void> };

export function registerDumpLog(program: Command, io: CliIo): void {
  program
    .command('dump-log')
    .description('Print the contents of log, index and time-index files (like kafka-dump-log.sh)')
    .requiredOption('--files <files>', 'comma-separated segment (.log), index (.index) or time index (.timeindex) files')
    .option('--print-data-log', 'print record keys, values and headers')
    .option('--deep-iteration', 'decode every record, not only batch headers')
    .option('--verify-index-only', 'check index entries against the log')
    .action(async (flags: DumpLogFlags) => {
      // Resolved at run time: the storage helper lands the module separately.
      const modulePath = '../storage/dump-log.js';
      const loaded = (await import(modulePath).catch(() => null)) as DumpLogModule | null;
      if (loaded?.dumpLog === undefined) throw new CliError('dump-log is not available in this build yet (src/storage/dump-log.ts)');
      await loaded.dumpLog({
        files: flags.files.split(',').map((f) => f.trim()).filter((f) => f !== ''),
        printDataLog: flags.printDataLog === true,
        deepIteration: flags.deepIteration === true || flags.printDataLog === true,
        verifyIndexOnly: flags.verifyIndexOnly === true,
        write: (text) => io.stdout(text),
      });
    });
}
