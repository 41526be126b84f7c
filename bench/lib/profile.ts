/**
 * Summarizes a V8 .cpuprofile (written by `node --cpu-prof`): self time per
 * function and per file, and the split between Spool's code, dependencies,
 * Node's own JavaScript, native code, GC and idle.
 *
 * Self time of a sample is the delta to the next sample (timeDeltas[i + 1]),
 * as Chrome DevTools attributes it. Functions are keyed by name, script and
 * line; scripts under dist/ are shown as their TypeScript source path (the
 * line is the compiled JavaScript line).
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface SelfTime {
  name: string;
  file: string;
  selfMs: number;
  /** Share of the non-idle time. */
  percent: number;
  /** The heaviest call path into it (callers, nearest first), for functions. */
  calledFrom?: string;
}

export interface ProfileSummary {
  file: string;
  totalMs: number;
  idleMs: number;
  busyMs: number;
  /** Shares of busy time: spool, dependencies, node, native, gc, program. */
  categories: Record<string, number>;
  topFunctions: SelfTime[];
  topFiles: SelfTime[];
}

function shortFile(url: string): string {
  if (url === '') return '(native)';
  const path = url.replace(/^file:\/\//, '');
  const dist = path.lastIndexOf('/dist/');
  if (dist >= 0) return path.slice(dist + '/dist/'.length).replace(/\.js$/, '.ts');
  const modules = path.lastIndexOf('/node_modules/');
  if (modules >= 0) return path.slice(modules + 1);
  return path;
}

function category(frame: CallFrame): string {
  const name = frame.functionName;
  if (name === '(idle)') return 'idle';
  if (name === '(garbage collector)') return 'gc';
  if (name === '(program)' || name === '(root)') return 'program';
  if (frame.url === '') return 'native';
  if (frame.url.startsWith('node:')) return 'node';
  if (frame.url.includes('/node_modules/')) return 'dependencies';
  if (frame.url.includes('/dist/src/')) return 'spool';
  return 'other';
}

interface Entry {
  name: string;
  file: string;
  us: number;
  /** Self time by caller path. */
  paths?: Map<string, number>;
}

/** Callers of a profile node, nearest first, as "name (file)", up to `depth`. */
function callerPath(id: number, parentOf: Map<number, number>, byId: Map<number, ProfileNode>, depth: number): string {
  const out: string[] = [];
  let current = parentOf.get(id);
  while (current !== undefined && out.length < depth) {
    const frame = byId.get(current)?.callFrame;
    if (frame === undefined || frame.functionName === '(root)') break;
    out.push(`${frame.functionName === '' ? '(anonymous)' : frame.functionName} (${shortFile(frame.url)})`);
    current = parentOf.get(current);
  }
  return out.join(' ← ');
}

function heaviest(paths: Map<string, number> | undefined): string | undefined {
  if (paths === undefined || paths.size === 0) return undefined;
  return [...paths.entries()].sort((a, b) => b[1] - a[1])[0]![0];
}

function top(map: Map<string, Entry>, busyUs: number, count: number): SelfTime[] {
  return [...map.values()]
    .sort((a, b) => b.us - a.us)
    .slice(0, count)
    .map((e) => {
      const calledFrom = heaviest(e.paths);
      return { name: e.name, file: e.file, selfMs: e.us / 1000, percent: (100 * e.us) / Math.max(1, busyUs), ...(calledFrom !== undefined ? { calledFrom } : {}) };
    });
}

export function summarizeProfile(path: string, count = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parentOf.set(child, n.id);
  const selfUs = new Map<number, number>();
  const meanDelta = (profile.endTime - profile.startTime) / Math.max(1, profile.samples.length);
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i + 1] ?? meanDelta;
    selfUs.set(id, (selfUs.get(id) ?? 0) + Math.max(0, delta));
  });
  const functions = new Map<string, Entry>();
  const files = new Map<string, Entry>();
  const categories: Record<string, number> = {};
  let idleUs = 0;
  let totalUs = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)?.callFrame;
    if (frame === undefined) continue;
    totalUs += us;
    const kind = category(frame);
    if (kind === 'idle') {
      idleUs += us;
      continue;
    }
    categories[kind] = (categories[kind] ?? 0) + us;
    const file = shortFile(frame.url);
    const name = frame.functionName === '' ? '(anonymous)' : frame.functionName;
    const key = `${name}\u0000${file}\u0000${frame.lineNumber}`;
    const entry = functions.get(key) ?? { name, file: frame.url === '' ? file : `${file}:${frame.lineNumber + 1}`, us: 0, paths: new Map() };
    entry.us += us;
    const path = callerPath(id, parentOf, byId, 3);
    entry.paths!.set(path, (entry.paths!.get(path) ?? 0) + us);
    functions.set(key, entry);
    const fileEntry = files.get(file) ?? { name: file, file, us: 0 };
    fileEntry.us += us;
    files.set(file, fileEntry);
  }
  const busyUs = totalUs - idleUs;
  for (const kind of Object.keys(categories)) categories[kind] = (100 * categories[kind]!) / Math.max(1, busyUs);
  return {
    file: path,
    totalMs: totalUs / 1000,
    idleMs: idleUs / 1000,
    busyMs: busyUs / 1000,
    categories,
    topFunctions: top(functions, busyUs, count),
    topFiles: top(files, busyUs, 10),
  };
}
