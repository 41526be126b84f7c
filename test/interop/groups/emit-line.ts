/**
 * One JSON line to stdout, handed to the kernel before the call returns, for
 * the Node member drivers. `process.stdout.write` on a pipe is asynchronous on
 * Linux: lines still queued in the process are lost when it calls
 * `process.exit()` or is killed with SIGKILL. A member prints a record and
 * then commits it, so a lost line is a record the test never sees while the
 * broker holds a commit past it, which reads as a skipped record.
 */
import { writeSync } from 'node:fs';

/** Waited on while stdout's pipe is full (its descriptor is non-blocking once Node has touched process.stdout). */
const pause = new Int32Array(new SharedArrayBuffer(4));
const FULL_PIPE_WAIT_MS = 1;

export function emitLine(event: string, fields: Record<string, unknown> = {}): void {
  const bytes = Buffer.from(`${JSON.stringify({ event, ...fields })}\n`);
  let written = 0;
  while (written < bytes.length) {
    try {
      written += writeSync(1, bytes, written);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      Atomics.wait(pause, 0, 0, FULL_PIPE_WAIT_MS);
    }
  }
}
