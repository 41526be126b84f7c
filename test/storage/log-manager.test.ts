/**
 * LogManager: loads every partition directory of a log dir, writes Kafka's
 * checkpoint files, marks clean shutdowns with .kafka_cleanshutdown (and
 * removes the marker at start), feeds recovery points / log start offsets /
 * high watermarks back on restart, rewrites the recovery point checkpoint
 * after a truncation, and deletes partition directories.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LogManager, MetadataLogDirError } from '../../src/storage/log-manager.js';
import { logConfig } from '../../src/storage/log-config.js';
import { makeBatch, readAllBatches, simEnv, type SimEnv } from './helpers.js';

const LOG_DIR = '/kafka-logs';
const A = { topic: 'orders', partition: 0 };
const B = { topic: 'my-topic', partition: 11 };

function open(env: SimEnv) {
  return LogManager.open(env, { logDir: LOG_DIR, configFor: () => logConfig({ segmentBytes: 400 }), brokerEpoch: 42 });
}

async function fill(manager: LogManager) {
  const a = await manager.getOrCreateLog(A);
  const b = await manager.getOrCreateLog(B);
  for (let i = 0; i < 10; i++) {
    await a.append(makeBatch({ count: 2, valueBytes: 40 }), { leaderEpoch: 1, assignOffsets: true });
    await b.append(makeBatch({ count: 1, valueBytes: 40 }), { leaderEpoch: 1, assignOffsets: true });
  }
  a.updateHighWatermark(15);
  b.updateHighWatermark(10);
  return { a, b };
}

describe('LogManager', () => {
  it('a clean shutdown writes checkpoints and the marker; the next start removes the marker and restores offsets', async () => {
    const env = simEnv();
    const manager = await open(env);
    const { a } = await fill(manager);
    await a.deleteRecordsBefore(5);
    await manager.close();
    const text = async (name: string) => (await env.fs.readFile(`${LOG_DIR}/${name}`)).toString();
    assert.equal(await text('recovery-point-offset-checkpoint'), '0\n2\norders 0 20\nmy-topic 11 10\n');
    assert.equal(await text('replication-offset-checkpoint'), '0\n2\norders 0 15\nmy-topic 11 10\n');
    assert.equal(await text('log-start-offset-checkpoint'), '0\n1\norders 0 5\n');
    assert.equal(await text('.kafka_cleanshutdown'), '{"version":0,"brokerEpoch":42}');
    env.fs.crash();

    const restarted = await open(env);
    assert.equal(restarted.hadCleanShutdown, true);
    assert.equal(restarted.previousBrokerEpoch, 42, 'the epoch the marker held, for KIP-966 registration');
    assert.equal(await env.fs.stat(`${LOG_DIR}/.kafka_cleanshutdown`), null);
    const a2 = restarted.getLog(A)!;
    const b2 = restarted.getLog(B)!;
    assert.deepEqual([a2.logStartOffset, a2.logEndOffset, a2.highWatermark, a2.recoveryPoint], [5, 20, 15, 20]);
    assert.deepEqual([b2.logEndOffset, b2.highWatermark], [10, 10]);
    assert.equal((await readAllBatches(b2)).length, 10);
  });

  it('after a crash the marker is absent, so logs recover from their checkpointed recovery points', async () => {
    const env = simEnv();
    const manager = await open(env);
    const { a } = await fill(manager);
    await a.flush();
    await manager.checkpointRecoveryPoints();
    env.fs.crash();
    const restarted = await open(env);
    assert.equal(restarted.hadCleanShutdown, false);
    assert.equal(restarted.getLog(A)!.logEndOffset, 20, 'flushed data survives');
    assert.ok(restarted.getLog(B)!.logEndOffset <= 10);
  });

  it('a truncation rewrites the recovery point checkpoint at once', async () => {
    const env = simEnv();
    const manager = await open(env);
    const { a } = await fill(manager);
    await a.flush();
    await manager.checkpointRecoveryPoints();
    await a.truncateTo(6);
    const text = (await env.fs.readFile(`${LOG_DIR}/recovery-point-offset-checkpoint`)).toString();
    assert.match(text, /^orders 0 6$/m);
  });

  it('ignores a corrupt checkpoint file (more recovery, same data)', async () => {
    const env = simEnv();
    const manager = await open(env);
    await fill(manager);
    await manager.close();
    await env.fs.writeFileAtomic(`${LOG_DIR}/recovery-point-offset-checkpoint`, Buffer.from('garbage'));
    const restarted = await open(env);
    assert.equal(restarted.getLog(A)!.logEndOffset, 20);
  });

  it('deleteLog renames the partition directory and removes it after file.delete.delay.ms', async () => {
    const env = simEnv();
    const manager = await open(env);
    await fill(manager);
    await manager.deleteLog(A);
    assert.equal(manager.getLog(A), undefined);
    const names = await env.fs.readdir(LOG_DIR);
    assert.ok(names.some((name) => name.startsWith('orders-0.') && name.endsWith('-delete')));
    assert.ok(!names.includes('orders-0'));
    env.clock.advance(60_000);
    await new Promise((resolve) => setImmediate(resolve));
    assert.ok(!(await env.fs.readdir(LOG_DIR)).some((name) => name.endsWith('-delete')));
  });

  it('background tasks checkpoint and apply retention on their intervals', async () => {
    const env = simEnv();
    const manager = await LogManager.open(env, {
      logDir: LOG_DIR,
      configFor: () => logConfig({ segmentBytes: 400, retentionBytes: 0 }),
      retentionCheckIntervalMs: 1000,
      flushOffsetCheckpointIntervalMs: 1000,
    });
    const { a } = await fill(manager);
    a.updateHighWatermark(20);
    manager.startBackgroundTasks();
    env.clock.advance(1000);
    await manager.awaitBackgroundTasks();
    assert.equal(a.logSegments.length, 1);
    assert.equal(a.logStartOffset, a.activeSegment.baseOffset);
    // Written after the pass; empty because Kafka lists only log starts inside a first segment.
    assert.equal((await env.fs.readFile(`${LOG_DIR}/log-start-offset-checkpoint`)).toString(), '0\n0\n');
    assert.match((await env.fs.readFile(`${LOG_DIR}/recovery-point-offset-checkpoint`)).toString(), /^0\n2\n/);
    await manager.close();
  });

  it('leaves the Raft metadata log and transitional directories alone', async () => {
    const env = simEnv();
    await env.fs.mkdir(`${LOG_DIR}/__cluster_metadata-0`);
    await env.fs.mkdir(`${LOG_DIR}/orders-0.5f3a-future`);
    await env.fs.mkdir(`${LOG_DIR}/orders-1.0a1b-delete`);
    await env.fs.writeFileAtomic(`${LOG_DIR}/meta.properties`, Buffer.from('version=1\n'));
    const manager = await open(env);
    assert.deepEqual(manager.allLogs(), []);
    const names = await env.fs.readdir(LOG_DIR);
    assert.ok(names.includes('__cluster_metadata-0'));
    assert.ok(names.includes('orders-0.5f3a-future'));
    assert.ok(!names.includes('orders-1.0a1b-delete'), 'deleted topics finish deleting');
  });

  it('refuses to open __cluster_metadata-0 as a partition log, leaving the Raft log\'s files untouched', async () => {
    // Bug pinned: a topic named __cluster_metadata got a Log over the Raft metadata log's directory; deleting it deleted the metadata.
    const env = simEnv();
    await env.fs.mkdir(`${LOG_DIR}/__cluster_metadata-0`);
    await env.fs.writeFileAtomic(`${LOG_DIR}/__cluster_metadata-0/quorum-state`, Buffer.from('{}'));
    const manager = await open(env);
    await assert.rejects(manager.getOrCreateLog({ topic: '__cluster_metadata', partition: 0 }), MetadataLogDirError);
    await assert.rejects(manager.getOrCreateLog({ topic: '__cluster_metadata', partition: 1 }), MetadataLogDirError);
    assert.equal(manager.getLog({ topic: '__cluster_metadata', partition: 0 }), undefined);
    await manager.deleteLog({ topic: '__cluster_metadata', partition: 0 });
    assert.deepEqual(await env.fs.readdir(`${LOG_DIR}/__cluster_metadata-0`), ['quorum-state']);
    assert.ok(!(await env.fs.readdir(LOG_DIR)).includes('__cluster_metadata-1'));
    await manager.close();
  });
});
