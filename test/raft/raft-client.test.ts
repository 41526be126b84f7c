/**
 * Proves the KRaft client on a simulated disk: a single voter elects itself
 * (new epoch, LeaderChangeMessage, quorum-state), appends are committed and
 * delivered before append() resolves, a restart replays every committed
 * batch in order and elects the next epoch, committed data survives a power
 * cut (flushed before commit), and snapshots are written in Kafka's file
 * format, loaded first on restart, and let retention drop the log below.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { posix } from 'node:path';
import { readQuorumState } from '../../src/raft/quorum-state-file.js';
import { CorruptSnapshotError, listSnapshots, readSnapshot, snapshotFileName } from '../../src/raft/snapshot.js';
import { METADATA_PARTITION_DIR } from '../../src/raft/raft-log.js';
import { NotLeaderError } from '../../src/raft/raft-client.js';
import { LOG_DIR, raftEnv, startClient, textSerde } from './helpers.js';

const DIR = posix.join(LOG_DIR, METADATA_PARTITION_DIR);

test('a single voter elects itself, writes a LeaderChangeMessage and reports leadership after it is committed', async () => {
  const env = raftEnv();
  const { client, listener } = await startClient(env);
  assert.deepEqual(client.leaderAndEpoch, { leaderId: 1, epoch: 1 });
  assert.equal(client.highWatermark, 1);
  assert.deepEqual(listener.deliveries, [
    { kind: 'leader', leaderId: null, epoch: 1 },
    { kind: 'batch', baseOffset: 0, lastOffset: 0, epoch: 1, records: [], control: ['LEADER_CHANGE'] },
    { kind: 'leader', leaderId: 1, epoch: 1 },
  ]);
  const persisted = await readQuorumState(env.fs, DIR);
  assert.equal(persisted?.epoch, 1);
  assert.equal(persisted?.leaderId, 1);
  await client.close();
});

test('append resolves after the batch is committed and delivered', async () => {
  const env = raftEnv();
  const { client, listener } = await startClient(env);
  const appended = await client.append(['a', 'b']);
  assert.deepEqual(appended, { baseOffset: 1, lastOffset: 2, epoch: 1 });
  assert.equal(client.highWatermark, 3);
  assert.deepEqual(listener.deliveries.at(-1), { kind: 'batch', baseOffset: 1, lastOffset: 2, epoch: 1, records: ['a', 'b'], control: [] });
  assert.equal(client.logEndOffset, 3);
  await client.close();
});

test('a restart replays every committed batch in order, then leads the next epoch', async () => {
  const env = raftEnv();
  const first = await startClient(env);
  await first.client.append(['a']);
  await first.client.append(['b', 'c']);
  await first.client.close();
  const second = await startClient(env);
  assert.deepEqual(second.client.leaderAndEpoch, { leaderId: 1, epoch: 2 });
  assert.deepEqual(second.listener.records, ['a', 'b', 'c']);
  const batches = second.listener.deliveries.filter((d) => d.kind === 'batch');
  assert.deepEqual(batches.map((b) => (b.kind === 'batch' ? [b.baseOffset, b.epoch] : null)), [[0, 1], [1, 1], [2, 1], [4, 2]]);
  // Leadership is announced only after the listener saw everything before the new epoch.
  assert.deepEqual(second.listener.deliveries.at(-1), { kind: 'leader', leaderId: 1, epoch: 2 });
  await second.client.append(['d']);
  await second.client.close();
  const third = await startClient(env);
  assert.deepEqual(third.listener.records, ['a', 'b', 'c', 'd']);
  assert.equal(third.client.leaderAndEpoch.epoch, 3);
  await third.client.close();
});

test('committed batches survive a power cut', async () => {
  const env = raftEnv(11);
  const { client } = await startClient(env);
  await client.append(['kept-1']);
  await client.append(['kept-2']);
  env.fs.crash({ keepUnsyncedPrefix: true });
  const after = await startClient(env);
  assert.deepEqual(after.listener.records, ['kept-1', 'kept-2']);
  assert.equal(after.client.leaderAndEpoch.epoch, 2);
  await after.client.close();
});

test('more voters need a raft channel, and only the leader appends', async () => {
  const env = raftEnv();
  await assert.rejects(startClient(env, { voters: [1, 2, 3] }), /needs a raft channel/);
  const { client } = await startClient(raftEnv());
  await client.close();
  await assert.rejects(client.append(['x']), /closed/);
  assert.equal(new NotLeaderError('x').name, 'NotLeaderError');
});

test('a snapshot is written in Kafka\'s format and loaded first on restart', async () => {
  const env = raftEnv();
  const first = await startClient(env);
  await first.client.append(['a', 'b']);
  await first.client.append(['c']);
  const id = { offset: first.client.logEndOffset, epoch: 1 };
  await first.client.createSnapshot(id, ['state-after-c'], 1234);
  await first.client.append(['d']);
  await first.client.close();
  assert.deepEqual(await listSnapshots(env.fs, DIR), [id]);
  assert.equal(snapshotFileName(id), '00000000000000000004-0000000001.checkpoint');
  const content = await readSnapshot(env.fs, DIR, id, textSerde);
  assert.deepEqual(content, { id, lastContainedLogTimestamp: 1234, records: ['state-after-c'] });
  const second = await startClient(env);
  assert.deepEqual(second.listener.deliveries[0], { kind: 'snapshot', offset: 4, epoch: 1, records: ['state-after-c'] });
  assert.deepEqual(second.listener.records, ['state-after-c', 'd']);
  await second.client.close();
});

test('a snapshot past the high watermark is refused', async () => {
  const { client } = await startClient(raftEnv());
  await assert.rejects(client.createSnapshot({ offset: 50, epoch: 1 }, [], 0), /past the high watermark/);
  await client.close();
});

test('retention drops the log below the latest snapshot and older snapshots', async () => {
  const env = raftEnv();
  const first = await startClient(env, { retentionBytes: 0 });
  for (let i = 0; i < 5; i++) await first.client.append([`r${i}`]);
  await first.client.createSnapshot({ offset: 3, epoch: 1 }, ['s3'], 0);
  await first.client.createSnapshot({ offset: first.client.logEndOffset, epoch: 1 }, ['s6'], 0);
  assert.deepEqual(await listSnapshots(env.fs, DIR), [{ offset: 6, epoch: 1 }]);
  await first.client.close();
  const second = await startClient(env, { retentionBytes: 0 });
  assert.deepEqual(second.listener.records, ['s6']);
  await second.client.append(['after']);
  await second.client.close();
});

test('a corrupt snapshot stops the start rather than loading wrong state', async () => {
  const env = raftEnv();
  const first = await startClient(env);
  await first.client.append(['a']);
  const id = { offset: first.client.logEndOffset, epoch: 1 };
  await first.client.createSnapshot(id, ['s'], 0);
  await first.client.close();
  env.fs.corrupt(posix.join(DIR, snapshotFileName(id)), { position: 70, length: 4, mode: 'garbage' });
  await assert.rejects(startClient(env), CorruptSnapshotError);
});
