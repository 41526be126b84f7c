/**
 * Enforces DESIGN.md §3.4 (all I/O through src/io) and proves the simulated
 * seams behave.
 *
 * The scan reads every src/**\/*.ts file outside src/io and fails, naming
 * file and line, if one imports node:fs, node:fs/promises or node:net, or
 * calls Date.now, setTimeout, setInterval, setImmediate or Math.random. It
 * also refuses the other direct reads of time and entropy the rule is about
 * (performance.now, process.hrtime, argument-less `new Date()`, crypto
 * randomBytes / randomUUID / randomInt / getRandomValues). Comments and string
 * literals are ignored, so prose may name the forbidden calls.
 *
 * ManualClock: timers fire in due order (ties in scheduling order) as time is
 * advanced, with the clock reading each timer's due time while it runs.
 * SeededRandom: the same seed gives the same sequence.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ManualClock, SeededRandom } from '../../src/io/env.js';

/** The repository root: the nearest directory above this file holding package.json (works from test/ and dist/test/). */
function repositoryRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    assert.notEqual(parent, dir, 'no package.json above the test file');
    dir = parent;
  }
  return dir;
}

function typeScriptFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...typeScriptFiles(path));
    else if (entry.name.endsWith('.ts')) out.push(path);
  }
  return out;
}

/**
 * Blanks comments (and, unless `keepStrings`, the insides of string and
 * template literals) with spaces, keeping newlines so line numbers hold.
 * Template substitutions `${...}` stay code.
 */
function blankComments(source: string, options: { keepStrings: boolean }): string {
  const out = source.split('');
  const blank = (i: number) => {
    if (out[i] !== '\n') out[i] = ' ';
  };
  const braces: number[] = []; // per open `${`, the brace depth inside it
  let i = 0;
  let quote: string | null = null;
  while (i < source.length) {
    const c = source[i]!;
    const next = source[i + 1];
    if (quote !== null) {
      if (c === '\\') {
        if (!options.keepStrings) {
          blank(i);
          blank(i + 1);
        }
        i += 2;
        continue;
      }
      if (c === quote) quote = null;
      else if (quote === '`' && c === '$' && next === '{') {
        braces.push(0);
        quote = null;
        i += 2;
        continue;
      } else if (!options.keepStrings) blank(i);
      i++;
      continue;
    }
    if (c === '/' && next === '/') {
      while (i < source.length && source[i] !== '\n') blank(i++);
      continue;
    }
    if (c === '/' && next === '*') {
      const end = source.indexOf('*/', i + 2);
      const stop = end < 0 ? source.length : end + 2;
      while (i < stop) blank(i++);
      continue;
    }
    if (c === "'" || c === '"' || c === '`') quote = c;
    else if (c === '{' && braces.length > 0) braces[braces.length - 1]!++;
    else if (c === '}' && braces.length > 0) {
      if (braces[braces.length - 1] === 0) {
        braces.pop();
        quote = '`';
      } else braces[braces.length - 1]!--;
    }
    i++;
  }
  return out.join('');
}

const FORBIDDEN_IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|\bimport\s+)(['"])(?:node:)?(fs|fs\/promises|net)\1/g;

const FORBIDDEN_CALLS: [RegExp, string][] = [
  [/\bDate\s*\.\s*now\s*\(/g, 'Date.now('],
  [/\bsetTimeout\s*\(/g, 'setTimeout('],
  [/\bsetInterval\s*\(/g, 'setInterval('],
  [/\bsetImmediate\s*\(/g, 'setImmediate('],
  [/\bMath\s*\.\s*random\s*\(/g, 'Math.random('],
  [/\bperformance\s*\.\s*now\s*\(/g, 'performance.now('],
  [/\bprocess\s*\.\s*hrtime\b/g, 'process.hrtime'],
  [/\bnew\s+Date\s*\(\s*\)/g, 'new Date()'],
  [/\b(?:randomBytes|randomUUID|randomInt|getRandomValues)\s*\(/g, 'crypto randomness'],
];

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** Every seam violation in one source text, as "line: what". */
function seamViolations(source: string): string[] {
  const found: string[] = [];
  const withStrings = blankComments(source, { keepStrings: true });
  for (const match of withStrings.matchAll(FORBIDDEN_IMPORT)) found.push(`${lineOf(source, match.index)}: imports ${match[0].trim()}`);
  const codeOnly = blankComments(source, { keepStrings: false });
  for (const [pattern, name] of FORBIDDEN_CALLS) {
    for (const match of codeOnly.matchAll(pattern)) found.push(`${lineOf(source, match.index)}: calls ${name}`);
  }
  return found;
}

test('no file under src/ outside src/io imports node:fs or node:net, or reads the clock, timers or randomness directly', () => {
  const root = repositoryRoot();
  const src = join(root, 'src');
  const files = typeScriptFiles(src).filter((path) => !relative(src, path).startsWith(`io/`) && !relative(src, path).startsWith('io\\'));
  assert.ok(files.length > 10, `expected to scan src/, found ${files.length} files`);
  const violations: string[] = [];
  for (const path of files) {
    for (const violation of seamViolations(readFileSync(path, 'utf8'))) violations.push(`${relative(root, path)}:${violation}`);
  }
  assert.deepEqual(violations, [], `use the Env seams in src/io instead:\n${violations.join('\n')}`);
});

test('the seam scan catches each forbidden import and call, and ignores comments and strings', () => {
  const bad = [
    "import { readFile } from 'node:fs';",
    "import * as fsp from 'node:fs/promises';",
    'import net from "node:net";',
    "import 'fs';",
    "const m = await import('node:fs');",
    'const t = Date.now();',
    'const h = setTimeout(() => {}, 5);',
    'setInterval(tick, 10);',
    'setImmediate(go);',
    'const r = Math.random();',
    'const s = `${Date.now()}`;',
  ];
  for (const line of bad) assert.equal(seamViolations(line).length, 1, line);
  const fine = [
    '// Date.now() is not used here; see setTimeout( in src/io',
    '/* Math.random( would break replay; import from "node:fs" neither */',
    "const message = 'do not call Date.now( here';",
    'const text = `setTimeout( in a template`;',
    'clock.nowMs(); timers.schedule(5, cb); random.nextInt(3);',
    "import { Reader } from './reader.js';",
    "import { fsync } from './fs-like.js';",
    'const d = new Date(timestampMs);',
  ];
  for (const line of fine) assert.deepEqual(seamViolations(line), [], line);
  assert.deepEqual(seamViolations('const a = 1;\n/* x */\nconst t = Date.now();'), ['3: calls Date.now(']);
});

test('ManualClock fires timers in due order as time advances, reading each due time while they run', () => {
  const clock = new ManualClock(1_000);
  const fired: string[] = [];
  const record = (name: string) => () => fired.push(`${name}@${clock.nowMs()}`);
  clock.schedule(30, record('c'));
  clock.schedule(10, record('a'));
  clock.schedule(20, record('b'));
  clock.schedule(50, record('late'));
  clock.advance(25);
  assert.deepEqual(fired, ['a@1010', 'b@1020']);
  assert.equal(clock.nowMs(), 1_025);
  assert.equal(clock.pendingCount, 2);
  clock.advance(25);
  assert.deepEqual(fired, ['a@1010', 'b@1020', 'c@1030', 'late@1050']);
  assert.equal(clock.pendingCount, 0);
  assert.equal(clock.monotonicMs(), 1_050);
});

test('ManualClock runs timers due at the same time in scheduling order', () => {
  const clock = new ManualClock(0);
  const fired: number[] = [];
  for (const id of [3, 1, 2]) clock.schedule(5, () => fired.push(id));
  clock.advance(5);
  assert.deepEqual(fired, [3, 1, 2]);
});

test('ManualClock: a timer scheduled by a callback fires in the same advance when due, cancelled timers never fire', () => {
  const clock = new ManualClock(0);
  const fired: string[] = [];
  clock.schedule(10, () => {
    fired.push(`first@${clock.nowMs()}`);
    clock.schedule(5, () => fired.push(`chained@${clock.nowMs()}`));
  });
  const cancelled = clock.schedule(12, () => fired.push('cancelled'));
  cancelled.cancel();
  clock.advance(20);
  assert.deepEqual(fired, ['first@10', 'chained@15']);
  clock.defer(() => fired.push(`deferred@${clock.nowMs()}`));
  assert.deepEqual(fired, ['first@10', 'chained@15'], 'nothing runs until time is advanced');
  clock.advance(0);
  assert.deepEqual(fired, ['first@10', 'chained@15', 'deferred@20']);
});

test('SeededRandom gives the same sequence for the same seed and a different one for another seed', () => {
  const draw = (seed: number) => {
    const random = new SeededRandom(seed);
    return {
      ints: Array.from({ length: 50 }, () => random.nextInt(1_000_000)),
      floats: Array.from({ length: 10 }, () => random.nextFloat()),
      bytes: random.bytes(64).toString('hex'),
      uuid: random.uuid().toString('hex'),
    };
  };
  assert.deepEqual(draw(42), draw(42));
  assert.deepEqual(draw(0), draw(0));
  assert.notDeepEqual(draw(42), draw(43));
  assert.notDeepEqual(draw(0), draw(1));
});

test('SeededRandom draws stay in range and spread over it', () => {
  const random = new SeededRandom(7);
  const buckets = new Array<number>(10).fill(0);
  for (let i = 0; i < 10_000; i++) {
    const value = random.nextInt(10);
    assert.ok(Number.isInteger(value) && value >= 0 && value < 10, `${value}`);
    buckets[value]!++;
    const float = random.nextFloat();
    assert.ok(float >= 0 && float < 1, `${float}`);
  }
  for (const count of buckets) assert.ok(count > 800 && count < 1200, `bucket count ${count} of 10000`);
  const uuid = random.uuid();
  assert.equal(uuid.length, 16);
  assert.equal(uuid[6]! >> 4, 4, 'version 4');
  assert.equal(uuid[8]! >> 6, 0b10, 'RFC 4122 variant');
});
