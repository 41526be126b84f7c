/**
 * A test reporter that prints nothing while tests run and, at the end:
 * - one block per test that failed, timed out or was cancelled: its file, its name and the first lines of its error;
 * - the slowest test files by wall time (first to last event seen from the file), since `--test-timeout` bounds a
 *   whole file as well as each test, and a file near the bound is the next timeout on a slower machine.
 *
 * `npm test` runs it beside the TAP reporter, so the tail of a CI log says what broke even when only the tail is kept.
 */

interface TestEvent {
  name: string;
  nesting: number;
  file?: string;
  details?: { duration_ms?: number; error?: { failureType?: string; message?: string; cause?: unknown } };
}

/** Lines of an error kept per failure. */
const ERROR_LINES = 12;
/** Files listed by wall time. */
const SLOWEST_FILES = 12;

function describeError(error: NonNullable<TestEvent['details']>['error']): string[] {
  if (error === undefined) return [];
  const cause = error.cause;
  const text =
    cause instanceof Error ? (cause.stack ?? cause.message) : cause !== undefined ? String(cause) : (error.message ?? '');
  const lines = text.split('\n').filter((line) => !/\(node:|at node:/.test(line));
  return lines.slice(0, ERROR_LINES);
}

export default async function* failureSummary(
  source: AsyncIterable<{ type: string; data: unknown }>,
): AsyncGenerator<string> {
  const failures: TestEvent[] = [];
  const fileSpans = new Map<string, { firstMs: number; lastMs: number }>();
  for await (const event of source) {
    const data = event.data as TestEvent | undefined;
    const file = data?.file;
    if (file !== undefined) {
      const now = Date.now();
      const span = fileSpans.get(file);
      if (span === undefined) fileSpans.set(file, { firstMs: now, lastMs: now });
      else span.lastMs = now;
    }
    if (event.type === 'test:fail') failures.push(data as TestEvent);
  }
  if (fileSpans.size > 0) {
    yield `\n# slowest test files (wall seconds, first to last event)\n`;
    const slowest = [...fileSpans].sort(([, a], [, b]) => b.lastMs - b.firstMs - (a.lastMs - a.firstMs));
    for (const [file, span] of slowest.slice(0, SLOWEST_FILES)) {
      yield `# ${((span.lastMs - span.firstMs) / 1000).toFixed(1).padStart(7)} ${file}\n`;
    }
  }
  if (failures.length === 0) return;
  yield `\n# failure summary: ${failures.length} failed, timed out or cancelled\n`;
  for (const failure of failures) {
    const kind = failure.details?.error?.failureType ?? 'failure';
    const seconds = ((failure.details?.duration_ms ?? 0) / 1000).toFixed(1);
    yield `# - ${failure.file ?? '?'}: ${'  '.repeat(failure.nesting)}${failure.name} [${kind}, ${seconds} s]\n`;
    for (const line of describeError(failure.details?.error)) yield `#     ${line}\n`;
  }
}
