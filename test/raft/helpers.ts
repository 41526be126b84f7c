/**
 * Fixtures for Raft tests: a simulated file system and clock, a text serde,
 * and a recording listener that keeps what the client delivered, in order.
 */
import { ManualClock, SeededRandom } from '../../src/io/env.js';
import { SimFileSystem } from '../../src/io/sim-fs.js';
import { KafkaRaftClient, type Batch, type LeaderAndEpoch, type RaftListener } from '../../src/raft/raft-client.js';
import { RaftLog } from '../../src/raft/raft-log.js';
import type { RecordSerde, SnapshotContent } from '../../src/raft/snapshot.js';

export const LOG_DIR = '/data';
export const DIRECTORY_ID = Buffer.alloc(16, 9).toString('base64url');

export interface RaftEnv {
  fs: SimFileSystem;
  clock: ManualClock;
  timers: ManualClock;
  random: SeededRandom;
}

export function raftEnv(seed = 3): RaftEnv {
  const clock = new ManualClock(1_700_000_000_000);
  return { fs: new SimFileSystem(new SeededRandom(seed), clock), clock, timers: clock, random: new SeededRandom(seed + 1) };
}

export const textSerde: RecordSerde<string> = {
  encode: (record) => Buffer.from(record, 'utf8'),
  decode: (value) => value.toString('utf8'),
};

export type Delivery =
  | { kind: 'snapshot'; offset: number; epoch: number; records: string[] }
  | { kind: 'batch'; baseOffset: number; lastOffset: number; epoch: number; records: string[]; control: string[] }
  | { kind: 'leader'; leaderId: number | null; epoch: number };

export class RecordingListener implements RaftListener<string> {
  readonly deliveries: Delivery[] = [];

  handleLoadSnapshot(snapshot: SnapshotContent<string>): void {
    this.deliveries.push({ kind: 'snapshot', offset: snapshot.id.offset, epoch: snapshot.id.epoch, records: snapshot.records });
  }

  handleCommit(batch: Batch<string>): void {
    this.deliveries.push({
      kind: 'batch',
      baseOffset: batch.baseOffset,
      lastOffset: batch.lastOffset,
      epoch: batch.epoch,
      records: batch.records,
      control: batch.control.map((c) => c.type),
    });
  }

  handleLeaderChange(leader: LeaderAndEpoch): void {
    this.deliveries.push({ kind: 'leader', leaderId: leader.leaderId, epoch: leader.epoch });
  }

  /** Every data record delivered, snapshots included, in order. */
  get records(): string[] {
    return this.deliveries.flatMap((d) => (d.kind === 'leader' ? [] : d.records));
  }
}

export async function startClient(
  env: RaftEnv,
  options: { retentionBytes?: number; voters?: number[] } = {},
): Promise<{ client: KafkaRaftClient<string>; listener: RecordingListener; log: RaftLog }> {
  const log = await RaftLog.open(env, { logDir: LOG_DIR, segmentBytes: 1024 * 1024, segmentMs: 604_800_000, retentionBytes: options.retentionBytes ?? -1 });
  const client = new KafkaRaftClient<string>({ nodeId: 1, voters: options.voters ?? [1], directoryId: DIRECTORY_ID, log, serde: textSerde, env });
  const listener = new RecordingListener();
  client.register(listener);
  await client.start();
  return { client, listener, log };
}
