/**
 * Reading a node's GET /metrics in the metrics tests: a scrape parsed into
 * samples (as far as the tests read the Prometheus text format), and the
 * value of one sample or the sum of several.
 */
import assert from 'node:assert/strict';
import type { SpoolNode } from '../../src/node/node.js';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parseSamples(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(match !== null, `a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const label of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[label[1]!] = label[2]!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

export async function scrape(node: SpoolNode): Promise<Sample[]> {
  const listener = node.metricsListener;
  assert.ok(listener !== null, 'the metrics listener is bound');
  const response = await fetch(`http://127.0.0.1:${listener.port}/metrics`);
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return parseSamples(await response.text());
}

/** The value of the one sample named `name` whose labels are exactly `labels`; undefined when there is none. */
export function valueOf(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels);
  const found = samples.filter((s) => s.name === name && Object.keys(s.labels).length === wanted.length && wanted.every(([key, value]) => s.labels[key] === value));
  assert.ok(found.length <= 1, `at most one ${name}${JSON.stringify(labels)}`);
  return found[0]?.value;
}

/** The sum of the samples named `name` whose labels include `labels`. */
export function sumOf(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value)).reduce((sum, s) => sum + s.value, 0);
}
