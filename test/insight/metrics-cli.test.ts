/**
 * Proves `spool start --metrics`: the flag serves /metrics on 9404 unless
 * metrics.listener says otherwise, and the bin prints where the metrics
 * are once the node serves (checked with metrics.listener on port 0, since
 * 9404 may be taken on a test machine), and they answer a scrape.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { applyMetricsFlag, METRICS_LISTENER_DEFAULT } from '../../src/cli/start.js';

const BIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

test('--metrics sets metrics.listener to http://127.0.0.1:9404 unless it is set; without the flag nothing changes', () => {
  const flagged = new Map<string, string>();
  applyMetricsFlag(flagged, { metrics: true });
  assert.equal(flagged.get('metrics.listener'), METRICS_LISTENER_DEFAULT);
  assert.equal(METRICS_LISTENER_DEFAULT, 'http://127.0.0.1:9404');
  const explicit = new Map([['metrics.listener', 'http://0.0.0.0:7071']]);
  applyMetricsFlag(explicit, { metrics: true });
  assert.equal(explicit.get('metrics.listener'), 'http://0.0.0.0:7071');
  const unflagged = new Map<string, string>();
  applyMetricsFlag(unflagged, {});
  assert.equal(unflagged.has('metrics.listener'), false);
});

test('spool start --metrics prints the metrics address, which serves a scrape', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spool-metrics-bin-'));
  const args = ['start', '--metrics', '--override', 'listeners=PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0', '--override', `log.dirs=${dir}`, '--override', 'metrics.listener=http://127.0.0.1:0'];
  const node = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => node.on('close', (code) => resolve(code)));
  try {
    const metricsLine = await new Promise<string>((resolve, reject) => {
      let text = '';
      node.stdout.on('data', (data: Buffer) => {
        text += data.toString();
        const line = text.split('\n').find((candidate) => candidate.startsWith('Metrics: '));
        if (line !== undefined) resolve(line);
      });
      node.on('close', (code) => reject(new Error(`spool start exited with ${code} before printing the metrics address: ${text}`)));
    });
    const match = /^Metrics: (http:\/\/127\.0\.0\.1:\d+\/metrics)$/.exec(metricsLine);
    assert.ok(match, metricsLine);
    const response = await fetch(match[1]!);
    assert.equal(response.status, 200);
    assert.match(await response.text(), /^kafka_server_replicamanager_partitioncount 0$/m);
  } finally {
    node.kill('SIGTERM');
    assert.equal(await exited, 0);
    rmSync(dir, { recursive: true, force: true });
  }
});
