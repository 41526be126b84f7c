/**
 * `spool dump-log`: kafka-dump-log.sh over Spool's storage reader
 * (dumpLogSegments in src/storage/dump-log.ts), with Kafka's flags.
 */
import type { Command } from 'commander';
import type { FileSystem } from '../io/fs.js';
import { CliError, type CliIo } from './io.js';

interface DumpLogFlags {
  files: string;
  printDataLog?: boolean;
  deepIteration?: boolean;
  indexSanityCheck?: boolean;
  verifyIndexOnly?: boolean;
  maxBytes?: string;
}

interface DumpLogOptions {
  files: readonly string[];
  printDataLog?: boolean;
  deepIteration?: boolean;
  indexSanityCheck?: boolean;
  verifyIndexOnly?: boolean;
  maxBytes?: number;
}

/** The storage module's entry point, as this command calls it. */
type DumpLogModule = {
  dumpLogSegments?: (fs: FileSystem, options: DumpLogOptions, sink: { out(line: string): void; err(line: string): void }) => Promise<void>;
};

export function registerDumpLog(program: Command, io: CliIo): void {
  program
    .command('dump-log')
    .description('Print the contents of log, index, time-index, txn-index and snapshot files (like kafka-dump-log.sh)')
    .requiredOption('--files <files>', 'comma-separated .log, .index, .timeindex, .txnindex, .snapshot or cleaner-offset-checkpoint files')
    .option('--print-data-log', 'print record keys and payloads')
    .option('--deep-iteration', 'print every record, not only batch headers')
    .option('--index-sanity-check', 'only check that index files are sane')
    .option('--verify-index-only', 'check index entries against the log without printing them')
    .option('--max-bytes <bytes>', 'read at most this many bytes of a .log file')
    .action(async (flags: DumpLogFlags) => {
      // Loaded by path at run time so the client-side commands never load the storage layer.
      const modulePath = '../storage/dump-log.js';
      const loaded = (await import(modulePath).catch(() => null)) as DumpLogModule | null;
      if (loaded?.dumpLogSegments === undefined) throw new CliError('dump-log is not available in this build (src/storage/dump-log.ts is missing)');
      const options: DumpLogOptions = {
        files: flags.files.split(',').map((f) => f.trim()).filter((f) => f !== ''),
        printDataLog: flags.printDataLog === true,
        deepIteration: flags.deepIteration === true,
        indexSanityCheck: flags.indexSanityCheck === true,
        verifyIndexOnly: flags.verifyIndexOnly === true,
      };
      if (flags.maxBytes !== undefined) options.maxBytes = Number(flags.maxBytes);
      await loaded.dumpLogSegments(io.env.fs, options, { out: (line) => io.stdout(`${line}\n`), err: (line) => io.stderr(`${line}\n`) });
    });
}
