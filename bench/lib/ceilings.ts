/**
 * The machine's own limits, measured in the same run as the brokers so each
 * figure can be read against them:
 * - sequential write of the data disk: 1 MiB writes of random bytes into a
 *   file next to the brokers' data directories, timed once up to the last
 *   write (what an unsynced log append can reach: the page cache) and once
 *   including fdatasync (what the device sustains);
 * - loopback TCP: a sink process reads what this process writes through
 *   127.0.0.1 for a few seconds, 1 MiB writes, respecting backpressure.
 *
 * Benchmark code, not product code: it uses node:fs, node:net directly.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, fdatasyncSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';

export interface Ceilings {
  diskWriteBytes: number;
  /** Up to the last write() returning (page cache). */
  diskWriteBufferedMiBPerS: number;
  /** Including fdatasync (the device). */
  diskWriteSyncedMiBPerS: number;
  loopbackTcpMiBPerS: number;
  loopbackTcpSeconds: number;
}

const CHUNK_BYTES = 1 << 20;

export function measureDiskWrite(dir: string, totalMiB: number): { bufferedMiBPerS: number; syncedMiBPerS: number } {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'ceiling-write.tmp');
  const chunk = randomBytes(CHUNK_BYTES);
  const fd = openSync(file, 'w');
  try {
    const start = performance.now();
    for (let i = 0; i < totalMiB; i++) writeSync(fd, chunk);
    const written = performance.now();
    fdatasyncSync(fd);
    const synced = performance.now();
    return { bufferedMiBPerS: totalMiB / ((written - start) / 1000), syncedMiBPerS: totalMiB / ((synced - start) / 1000) };
  } finally {
    closeSync(fd);
    rmSync(file, { force: true });
  }
}

/** The sink: listens on an ephemeral port, prints it, counts bytes from the first to the last, prints JSON on close. */
const SINK_SOURCE = `
import { createServer } from 'node:net';
const server = createServer((socket) => {
  let bytes = 0, first = 0, last = 0;
  socket.on('data', (d) => { if (bytes === 0) first = performance.now(); bytes += d.length; last = performance.now(); });
  socket.on('close', () => { process.stdout.write(JSON.stringify({ bytes, seconds: (last - first) / 1000 }) + '\\n'); process.exit(0); });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
`;

export async function measureLoopbackTcp(seconds: number): Promise<{ mibPerS: number; seconds: number }> {
  const sink = spawn(process.execPath, ['--input-type=module', '-e', SINK_SOURCE], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    sink.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      const first = output.split('\n')[0];
      if (output.includes('\n') && first !== undefined && /^\d+$/.test(first)) resolve(Number(first));
    });
    sink.once('exit', () => reject(new Error('tcp sink exited early')));
  });
  const exited = new Promise<void>((resolve) => sink.once('exit', () => resolve()));
  const chunk = randomBytes(CHUNK_BYTES);
  await new Promise<void>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('error', reject);
    socket.once('connect', () => {
      const endMs = performance.now() + seconds * 1000;
      const pump = (): void => {
        while (performance.now() < endMs) {
          if (!socket.write(chunk)) {
            socket.once('drain', pump);
            return;
          }
        }
        socket.end(() => resolve());
      };
      pump();
    });
  });
  await exited;
  const result = JSON.parse(output.trim().split('\n')[1] ?? '{}') as { bytes: number; seconds: number };
  return { mibPerS: result.bytes / CHUNK_BYTES / result.seconds, seconds: result.seconds };
}

export async function measureCeilings(dir: string, options: { diskMiB: number; tcpSeconds: number }): Promise<Ceilings> {
  const disk = measureDiskWrite(dir, options.diskMiB);
  const tcp = await measureLoopbackTcp(options.tcpSeconds);
  return {
    diskWriteBytes: options.diskMiB * CHUNK_BYTES,
    diskWriteBufferedMiBPerS: disk.bufferedMiBPerS,
    diskWriteSyncedMiBPerS: disk.syncedMiBPerS,
    loopbackTcpMiBPerS: tcp.mibPerS,
    loopbackTcpSeconds: tcp.seconds,
  };
}
