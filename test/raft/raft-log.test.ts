/**
 * The metadata log's truncation after a divergence, as Kafka's
 * ReplicatedLog.truncateToEndOffset decides it.
 */
import assert from 'node:assert/strict';
import { posix } from 'node:path';
import { test } from 'node:test';
import { buildBatch } from '../../src/protocol/records/records.js';
import { METADATA_PARTITION_DIR, RaftLog } from '../../src/raft/raft-log.js';
import { snapshotFileName } from '../../src/raft/snapshot.js';
import { LOG_DIR, raftEnv } from './helpers.js';

async function openLog(options: { bootstrapSnapshot: boolean }): Promise<RaftLog> {
  const env = raftEnv();
  const dir = posix.join(LOG_DIR, METADATA_PARTITION_DIR);
  await env.fs.mkdir(LOG_DIR);
  await env.fs.mkdir(dir);
  // kafka-storage.sh format's bootstrap.checkpoint is the snapshot 0-0 of the metadata log.
  if (options.bootstrapSnapshot) await env.fs.writeFileAtomic(posix.join(dir, snapshotFileName({ offset: 0, epoch: 0 })), Buffer.alloc(0));
  return RaftLog.open(env, { logDir: LOG_DIR, segmentBytes: 1024 * 1024, segmentMs: 604_800_000, retentionBytes: -1 });
}

async function appendAsLeader(log: RaftLog, epoch: number, value: string): Promise<void> {
  const batch = buildBatch({ records: [{ key: null, value: Buffer.from(value), timestamp: 0 }], baseOffset: log.logEndOffset, partitionLeaderEpoch: epoch });
  await log.appendAsLeader(batch, epoch);
}

test('a replica that led an epoch alone truncates its whole log when the leader says the earlier epoch ended where it began', async () => {
  // This replica won epoch 2 and wrote its LeaderChangeMessage at offset 0; the quorum went on from epoch 1's entry at
  // offset 0 and epoch 3 from offset 1. The leader answers the fetch (offset 1, last epoch 2) with the diverging epoch 1
  // ending at 1; this log knows no epoch 1 (its epoch 1 ends at the bootstrap snapshot 0-0), so it cuts to 0 rather than
  // keep its entry and fetch the same answer for ever.
  const log = await openLog({ bootstrapSnapshot: true });
  await appendAsLeader(log, 2, 'epoch 2 alone');
  assert.equal(await log.truncateToEndOffset({ offset: 1, epoch: 1 }), 0);
  assert.equal(log.logEndOffset, 0);
});

test('truncation stops at the end of the epoch both logs share, whichever log ends it first', async () => {
  const log = await openLog({ bootstrapSnapshot: false });
  await appendAsLeader(log, 1, 'a');
  await appendAsLeader(log, 1, 'b');
  await appendAsLeader(log, 2, 'c');
  // The leader's epoch 1 ended later than this log's: cut where this log's epoch 1 ends.
  assert.equal(await log.truncateToEndOffset({ offset: 5, epoch: 1 }), 2);
  assert.equal(log.logEndOffset, 2);
  // The leader's epoch 1 ended first: cut there.
  assert.equal(await log.truncateToEndOffset({ offset: 1, epoch: 1 }), 1);
  assert.equal(log.logEndOffset, 1);
});
