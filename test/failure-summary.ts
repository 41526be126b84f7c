/**
 * A test reporter that prints nothing while tests run and, at the end, one block per test that failed, timed out
 * or was cancelled: its file, its name and the first lines of its error.
 *
 * `npm test` runs it beside the TAP reporter, so the tail of a CI log says what broke even when only the tail is kept.
 */

interface FailEvent {
  name: string;
  nesting: number;
  file?: string;
  details: { duration_ms?: number; error?: { failureType?: string; message?: string; cause?: unknown } };
}

/** Lines of an error kept per failure. */
const ERROR_LINES = 12;

function describeError(error: FailEvent['details']['error']): string[] {
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
  const failures: FailEvent[] = [];
  for await (const event of source) {
    if (event.type === 'test:fail') failures.push(event.data as FailEvent);
  }
  if (failures.length === 0) return;
  yield `\n# failure summary: ${failures.length} failed, timed out or cancelled\n`;
  for (const failure of failures) {
    const kind = failure.details.error?.failureType ?? 'failure';
    const seconds = ((failure.details.duration_ms ?? 0) / 1000).toFixed(1);
    yield `# - ${failure.file ?? '?'}: ${'  '.repeat(failure.nesting)}${failure.name} [${kind}, ${seconds} s]\n`;
    for (const line of describeError(failure.details.error)) yield `#     ${line}\n`;
  }
}
