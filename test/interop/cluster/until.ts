/**
 * Waiting on real processes and sockets in the cluster tests: a probe is
 * asked again every `pollMs` until it answers (not null) or `waitMs` passes.
 *
 * Spool's real timers are unref'd (a node's timers never hold its process
 * open), so a probe waiting only on them, such as a controller channel
 * retrying a controller that is not listening yet, would let the test
 * process's event loop end under it: the loop is held open while a probe runs.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export async function until<T>(what: string, probe: () => Promise<T | null>, { waitMs, pollMs }: { waitMs: number; pollMs: number }): Promise<T> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const value = await keepingAlive(probe());
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`${what} not reached within ${waitMs} ms`);
    await sleep(pollMs);
  }
}

async function keepingAlive<T>(probe: Promise<T>): Promise<T> {
  const hold = setInterval(() => undefined, 1000);
  try {
    return await probe;
  } finally {
    clearInterval(hold);
  }
}
