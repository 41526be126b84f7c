/**
 * The doctor's reading of growing lag from two samples: which cause it
 * names when a member is busy with other partitions, when commits wait at a
 * transaction's last stable offset, and when the owner commits nothing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkConsumerLag } from '../../src/insight/doctor-checks.js';
import type { GroupSample, PartitionSample, Sample } from '../../src/insight/doctor-sample.js';
import type { ConsumerGroupDescription } from '../../src/client/group-admin.js';

interface PartitionAt {
  committed: number;
  highWatermark: number;
  lastStableOffset?: number;
}

/** A sample of group `g` on topic `t`, whose one member `m` owns every partition given. */
function sample(atMs: number, partitions: PartitionAt[], members = 1): Sample {
  const tps = partitions.map((_, partition) => ({ topic: 't', partition }));
  const description = {
    groupId: 'g',
    groupState: 'Stable',
    members: Array.from({ length: members }, () => ({ memberId: 'm', assignment: tps })),
  } as unknown as ConsumerGroupDescription;
  const group: GroupSample = { groupId: 'g', description, committed: new Map(partitions.map((p, i) => [`t-${i}`, p.committed])) };
  const partitionSamples = new Map<string, PartitionSample>(
    partitions.map((p, i) => [
      `t-${i}`,
      { topic: 't', partition: i, topicId: 'id', isInternal: false, leader: 1, leaderEpoch: 0, replicas: [1], isr: [1], highWatermark: p.highWatermark, lastStableOffset: p.lastStableOffset ?? p.highWatermark, logEndOffset: p.highWatermark, error: null },
    ]),
  );
  return { atMs, partitions: partitionSamples, groups: new Map([['g', group]]) };
}

function causes(first: Sample, second: Sample): Record<string, string[]> {
  return Object.fromEntries(checkConsumerLag(first, second).map((f) => [f.evidence['cause'] as string, (f.evidence['partitions'] as string[]).map((p) => p.split(':')[0]!)]));
}

test('a member that commits one partition while another one\'s lag grows is slow, not stuck', () => {
  const first = sample(0, [{ committed: 10, highWatermark: 100 }, { committed: 0, highWatermark: 100 }]);
  const second = sample(2000, [{ committed: 12, highWatermark: 120 }, { committed: 0, highWatermark: 130 }]);
  assert.deepEqual(causes(first, second), { 'slow-consumers': ['t-0', 't-1'] });
});

test('commits that sit at a last stable offset below the high watermark are held by a transaction', () => {
  const first = sample(0, [{ committed: 10, highWatermark: 100, lastStableOffset: 10 }]);
  const second = sample(2000, [{ committed: 10, highWatermark: 120, lastStableOffset: 10 }]);
  assert.deepEqual(causes(first, second), { 'held-by-transaction': ['t-0'] });
});

test('an owner that commits nothing while its lag grows has stalled commits; a group without members has none', () => {
  const first = sample(0, [{ committed: 10, highWatermark: 100 }, { committed: 5, highWatermark: 50 }]);
  const second = sample(2000, [{ committed: 10, highWatermark: 120 }, { committed: 5, highWatermark: 60 }]);
  assert.deepEqual(causes(first, second), { 'commits-stalled': ['t-0', 't-1'] });
  assert.deepEqual(causes(sample(0, [{ committed: 10, highWatermark: 100 }], 0), sample(2000, [{ committed: 10, highWatermark: 120 }], 0)), { 'no-members': ['t-0'] });
});
