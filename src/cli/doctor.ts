/**
 * `spool doctor`: walks the chain a record travels (produce → ISR → high
 * watermark → last stable offset → consumer group) and names the stuck
 * link, with the evidence. It samples the cluster twice, --sample-ms
 * apart, to tell movement from standstill, and prints one line per
 * finding (`SEVERITY check subject: message (evidence)`), or with --json
 * the whole report. The engine is src/insight/doctor.ts.
 *
 * Exit codes: 0 no problem found (info findings only), 2 a critical or
 * warning finding (DOCTOR_EXIT_PROBLEM), 1 doctor itself failed (bad
 * arguments, no broker reachable).
 *
 * --command-config takes the client properties Spool's admin client has
 * (client.id, request.timeout.ms, retry.backoff.ms, retry.backoff.max.ms,
 * metadata.max.age.ms); any other property is refused, so a security
 * setting Spool's client cannot apply is never ignored in silence.
 */
import type { Command } from 'commander';
import { Admin, type AdminOptions } from '../client/admin.js';
import { parseBootstrapServers } from '../client/cluster.js';
import { parseProperties } from '../common/config.js';
import { httpGetJson } from '../io/http-get.js';
import { DOCTOR_SAMPLE_MS_DEFAULT, runDoctor } from '../insight/doctor.js';
import { DOCTOR_EXIT_PROBLEM, formatFinding, isProblem, type DoctorReport } from '../insight/doctor-findings.js';
import { CliError, collect, DEFAULT_BOOTSTRAP_SERVER, type CliIo } from './io.js';

interface DoctorFlags {
  bootstrapServer: string;
  bootstrapController?: string;
  commandConfig?: string;
  topic: string[];
  group: string[];
  sampleMs: string;
  json?: boolean;
}

type AdminSetter = (options: AdminOptions, value: string) => void;

function integer(name: string, value: string): number {
  if (!/^\d+$/.test(value.trim())) throw new CliError(`Invalid value ${value} for configuration ${name}: Not a number`);
  return Number(value.trim());
}

const ADMIN_PROPERTIES: Record<string, AdminSetter> = {
  'client.id': (o, v) => { o.clientId = v; },
  'request.timeout.ms': (o, v) => { o.requestTimeoutMs = integer('request.timeout.ms', v); },
  'retry.backoff.ms': (o, v) => { o.retryBackoffMs = integer('retry.backoff.ms', v); },
  'retry.backoff.max.ms': (o, v) => { o.retryBackoffMaxMs = integer('retry.backoff.max.ms', v); },
  'metadata.max.age.ms': (o, v) => { o.metadataMaxAgeMs = integer('metadata.max.age.ms', v); },
};

async function adminOptions(flags: DoctorFlags, io: CliIo): Promise<AdminOptions> {
  const options: AdminOptions = { bootstrapServers: flags.bootstrapServer, env: io.env, clientId: 'spool-doctor' };
  if (flags.commandConfig === undefined) return options;
  if ((await io.env.fs.stat(flags.commandConfig)) === null) throw new CliError(`Properties file ${flags.commandConfig} does not exists!`);
  const properties = parseProperties((await io.env.fs.readFile(flags.commandConfig)).toString('utf8'));
  for (const [name, value] of properties) {
    const setter = ADMIN_PROPERTIES[name];
    if (setter === undefined) throw new CliError(`Unsupported property ${name} in ${flags.commandConfig}: Spool's admin client takes ${Object.keys(ADMIN_PROPERTIES).join(', ')}`);
    setter(options, value);
  }
  return options;
}

function printReport(report: DoctorReport, io: CliIo, json: boolean): void {
  if (json) {
    io.stdout(`${JSON.stringify(report, null, 2)}\n`);
    return;
  }
  for (const finding of report.findings) io.stdout(`${formatFinding(finding)}\n`);
  if (!report.findings.some(isProblem)) io.stdout(`No problems found (watched for ${report.sampleMs} ms).\n`);
  for (const gap of report.gaps) io.stdout(`not checked: ${gap}\n`);
}

export function registerDoctor(program: Command, io: CliIo): void {
  program
    .command('doctor')
    .description(`Find why data is not flowing: ISR below min.insync.replicas, throttles, a stuck high watermark and the lagging follower, an open transaction holding the LSO, growing consumer lag, stuck rebalances, under-replicated and offline partitions, offline log directories, fenced brokers, a leaderless quorum. Exit code 0 when healthy, ${DOCTOR_EXIT_PROBLEM} when a problem is found, 1 when doctor fails`)
    .option('--bootstrap-server <server>', 'the broker(s) to connect to', DEFAULT_BOOTSTRAP_SERVER)
    .option('--bootstrap-controller <controller>', 'KRaft controller(s) to ask for the quorum (as kafka-metadata-quorum); default: ask the brokers')
    .option('--command-config <file>', 'a properties file of admin client settings')
    .option('--topic <topic>', 'only this topic (repeatable)', collect, [])
    .option('--group <group>', 'only this consumer group (repeatable)', collect, [])
    .option('--sample-ms <ms>', 'how long to watch for movement between the two samples', String(DOCTOR_SAMPLE_MS_DEFAULT))
    .option('--json', 'print the report as JSON')
    .action(async (flags: DoctorFlags) => {
      const sampleMs = Number(flags.sampleMs);
      if (!/^\d+$/.test(flags.sampleMs) || !Number.isSafeInteger(sampleMs)) throw new CliError(`--sample-ms must be a number of milliseconds, not ${flags.sampleMs}`);
      const controllers = flags.bootstrapController === undefined ? null : parseBootstrapServers(flags.bootstrapController);
      const admin = new Admin(await adminOptions(flags, io));
      try {
        const report = await runDoctor(admin, {
          topics: flags.topic.length === 0 ? null : flags.topic,
          groups: flags.group.length === 0 ? null : flags.group,
          sampleMs,
          controllers,
          getJson: httpGetJson,
        });
        printReport(report, io, flags.json === true);
        const problems = report.findings.filter(isProblem).length;
        if (problems > 0) throw new CliError(`${problems} problem${problems === 1 ? '' : 's'} found (watched for ${sampleMs} ms)`, DOCTOR_EXIT_PROBLEM);
      } finally {
        await admin.close();
      }
    });
}
