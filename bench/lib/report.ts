/**
 * The benchmark's output: one run as JSON (bench/results/<date>.json) and as
 * Markdown, which replaces the block between the `bench:run` markers in
 * docs/PERFORMANCE.md (the rest of that file belongs to people, not to this
 * script).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Ceilings } from './ceilings.js';
import type { MachineInfo } from './proc.js';
import type { ProfileSummary } from './profile.js';

export type BrokerKind = 'kafka' | 'spool';

/** One row of the table: a figure measured on both brokers by one generator. */
export interface Figure {
  scenario: number;
  title: string;
  generator: string;
  metric: string;
  unit: string;
  better: 'higher' | 'lower';
  /** The issue's target for Spool/Kafka, e.g. ">= 1.0". */
  target?: { op: '>=' | '<='; ratio: number };
  values: Partial<Record<BrokerKind, number | null>>;
  notes: Partial<Record<BrokerKind, string>>;
  commands: Partial<Record<BrokerKind, string>>;
  details: Partial<Record<BrokerKind, unknown>>;
}

export interface ProfileEntry {
  scenario: number;
  title: string;
  command: string;
  summary: ProfileSummary | null;
  error: string | null;
}

export interface BenchRun {
  startedAt: string;
  finishedAt: string;
  durationS: number;
  command: string;
  options: Record<string, unknown>;
  machine: MachineInfo;
  versions: Record<string, string>;
  brokerSettings: Record<string, string>;
  brokerStartCommands: Partial<Record<BrokerKind, string>>;
  ceilings: Ceilings | null;
  figures: Figure[];
  profiles: ProfileEntry[];
  notes: string[];
}

export const RUN_START_MARKER = '<!-- bench:run:start (written by `npm run bench`; edits inside are overwritten) -->';
export const RUN_END_MARKER = '<!-- bench:run:end -->';

export function ratio(figure: Figure): number | null {
  const kafka = figure.values.kafka;
  const spool = figure.values.spool;
  if (kafka === null || kafka === undefined || spool === null || spool === undefined || kafka <= 0) return null;
  return spool / kafka;
}

function fmt(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  const abs = Math.abs(value);
  if (abs >= 10_000) return Math.round(value).toLocaleString('en-US');
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

function targetCell(figure: Figure): string {
  if (figure.target === undefined) return '';
  const r = ratio(figure);
  const text = `${figure.target.op} ${figure.target.ratio.toFixed(figure.target.ratio * 10 % 1 === 0 ? 1 : 2)}`;
  if (r === null) return text;
  const met = figure.target.op === '>=' ? r >= figure.target.ratio : r <= figure.target.ratio;
  return `${text} ${met ? 'met' : '**missed**'}`;
}

function escapeCell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function tableLines(run: BenchRun): { table: string[]; footnotes: string[] } {
  const table = [
    '| # | scenario | generator | figure | Kafka | Spool | Spool/Kafka | target |',
    '| -: | --- | --- | --- | -: | -: | -: | --- |',
  ];
  const footnotes: string[] = [];
  for (const figure of run.figures) {
    const cells = (['kafka', 'spool'] as const).map((kind) => {
      let cell = fmt(figure.values[kind]);
      const note = figure.notes[kind];
      if (note !== undefined) {
        if (!footnotes.includes(note)) footnotes.push(note);
        cell += ` [${footnotes.indexOf(note) + 1}]`;
      }
      return cell;
    });
    const r = ratio(figure);
    table.push(`| ${figure.scenario} | ${escapeCell(figure.title)} | ${figure.generator} | ${figure.metric} (${figure.unit}${figure.better === 'higher' ? ', higher is better' : ', lower is better'}) | ${cells[0]} | ${cells[1]} | ${r === null ? '—' : r.toFixed(2)} | ${targetCell(figure)} |`);
  }
  return { table, footnotes };
}

function profileLines(run: BenchRun): string[] {
  const out: string[] = [];
  for (const entry of run.profiles) {
    out.push('', `#### Spool under scenario ${entry.scenario}: ${entry.title}`, '');
    if (entry.summary === null) {
      out.push(`No profile: ${entry.error ?? 'unknown reason'}`);
      continue;
    }
    const s = entry.summary;
    const split = Object.entries(s.categories).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v.toFixed(0)}%`).join(', ');
    out.push(`Busy ${(s.busyMs / 1000).toFixed(1)} s of ${(s.totalMs / 1000).toFixed(1)} s sampled (the rest idle). Busy time by origin: ${split}.`, '');
    out.push('| self % of busy | self ms | function | where | heaviest callers |', '| -: | -: | --- | --- | --- |');
    for (const f of s.topFunctions) out.push(`| ${f.percent.toFixed(1)} | ${f.selfMs.toFixed(0)} | \`${escapeCell(f.name)}\` | ${escapeCell(f.file)} | ${escapeCell(f.calledFrom ?? '')} |`);
    out.push('', 'By file: ' + s.topFiles.map((f) => `${f.file} ${f.percent.toFixed(1)}%`).join(', ') + '.');
    out.push('', `Command: \`${entry.command}\``);
  }
  return out;
}

export function renderMarkdown(run: BenchRun, jsonPath: string): string {
  const m = run.machine;
  const c = run.ceilings;
  const { table, footnotes } = tableLines(run);
  const lines = [
    `### Run of ${run.startedAt.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')}`,
    '',
    `Command: \`${run.command}\` (${(run.durationS / 60).toFixed(1)} min). Raw figures: [${jsonPath}](../${jsonPath}).`,
    '',
    `- Machine: ${m.cpuModel}, ${m.cores} cores, ${m.memoryGiB} GiB RAM, ${m.kernel}; data disk ${m.dataDisk}. ` +
      `Load average at start ${m.loadAverageStart.join(' / ')}, at end ${(m.loadAverageEnd ?? []).join(' / ')}` +
      (m.loadAverageStart[0]! > m.cores ? ' — **the machine was busy with other work; treat the figures as rough.**' : '.'),
    `- Versions: ${Object.entries(run.versions).map(([k, v]) => `${k} ${v}`).join(', ')}.`,
    c === null
      ? '- Ceilings: not measured in this run.'
      : `- Ceilings measured in this run: sequential write of the data disk ${fmt(c.diskWriteBufferedMiBPerS)} MiB/s into the page cache, ` +
        `${fmt(c.diskWriteSyncedMiBPerS)} MiB/s including fdatasync (${c.diskWriteBytes / 2 ** 20} MiB of 1 MiB writes); loopback TCP ${fmt(c.loopbackTcpMiBPerS)} MiB/s (one connection, 1 MiB writes).`,
    `- Both brokers: one process, broker and controller (KRaft), ${Object.entries(run.brokerSettings).map(([k, v]) => `\`${k}=${v}\``).join(', ')}; no fsync per message (Kafka's default flush settings); ` +
      'fresh data directory on the same disk for each broker, deleted afterwards; each scenario writes to its own new topic, deleted after it. ' +
      'Load generators run on the same machine as the broker and share its cores.',
    '',
    ...table,
    '',
  ];
  if (footnotes.length > 0) lines.push(...footnotes.map((note, i) => `[${i + 1}] ${escapeCell(note)}  `), '');
  if (run.notes.length > 0) lines.push(...run.notes.map((n) => `- ${n}`), '');
  lines.push('<details><summary>Exact commands</summary>', '');
  for (const [kind, command] of Object.entries(run.brokerStartCommands)) lines.push(`- start ${kind}: \`${command.replace(/ \d+$/, ' <port>')}\``);
  const seen = new Set<string>();
  for (const figure of run.figures) {
    if (figure.scenario === 7) continue; // the start commands above
    for (const [kind, command] of Object.entries(figure.commands)) {
      const generic = command.replace(/127\.0\.0\.1:\d+/g, '<bootstrap>');
      if (seen.has(generic)) continue;
      seen.add(generic);
      lines.push(`- scenario ${figure.scenario}, ${figure.generator} (${kind}${kind === 'kafka' ? ', same for Spool' : ''}): \`${generic}\``);
    }
  }
  lines.push('', '</details>');
  if (run.profiles.length > 0) lines.push('', '#### Spool CPU profiles (`node --cpu-prof`)', ...profileLines(run));
  return lines.join('\n');
}

export function writeJson(path: string, run: BenchRun): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, JSON.stringify(run, null, 2) + '\n');
}

/** Replaces the generated block of docs/PERFORMANCE.md, keeping everything else. */
export function updatePerformanceDoc(docPath: string, markdown: string): void {
  const block = `${RUN_START_MARKER}\n${markdown}\n${RUN_END_MARKER}`;
  const text = existsSync(docPath) ? readFileSync(docPath, 'utf8') : '';
  const start = text.indexOf(RUN_START_MARKER.slice(0, 20));
  const end = text.indexOf(RUN_END_MARKER);
  if (start >= 0 && end > start) {
    writeFileSync(docPath, text.slice(0, start) + block + text.slice(end + RUN_END_MARKER.length));
  } else {
    writeFileSync(docPath, `${text.trimEnd()}\n\n${block}\n`);
  }
}
