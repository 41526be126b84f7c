/**
 * Pieces of Raft's RPCs shared by both sides: the one partition they name
 * (`__cluster_metadata` partition 0, topic id Uuid.METADATA_TOPIC_ID), the
 * leader's progress record per replica, and the copying of a snapshot by
 * FetchSnapshot (KIP-630).
 *
 * A snapshot is copied whole into memory and written at once (metadata
 * snapshots are small); it is written to its final name only when complete,
 * through the file system's atomic write, so a crash mid-copy leaves nothing
 * behind, and it is validated (header, footer, CRCs) before the log is
 * replaced by it.
 */
import { posix } from 'node:path';
import type { FileSystem } from '../io/fs.js';
import { ErrorCode } from '../protocol/errors.js';
import type { RequestOf } from '../protocol/schema.js';
import type { Fetch } from '../protocol/schemas/01-fetch.js';
import { CLUSTER_METADATA_TOPIC_NAME } from '../storage/file-names.js';
import type { RaftLog } from './raft-log.js';
import { compareSnapshotIds, snapshotFileName, type OffsetAndEpoch } from './snapshot.js';

export const METADATA_TOPIC = CLUSTER_METADATA_TOPIC_NAME;
export const METADATA_PARTITION = 0;
/** Kafka's Uuid.METADATA_TOPIC_ID: (0, 1) in base64url. */
export const METADATA_TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';

export type FetchPartitionRequest = RequestOf<typeof Fetch>['topics'][number]['partitions'][number];

/** The leader's record of one replica, as DescribeQuorum reports it. */
export interface ReplicaProgress {
  endOffset: number;
  lastFetchTimestamp: number;
  lastCaughtUpTimestamp: number;
  directoryId: string;
}

/** A diverging epoch or snapshot id field is set when either half is not -1. */
export function isSet(value: { epoch: number; endOffset: number }): boolean {
  return value.epoch !== -1 || value.endOffset !== -1;
}

/** The metadata partition of a response's single topic, or null when the response names anything else. */
export function metadataPartitionOf<TT extends { partitions: readonly unknown[] }>(
  topics: readonly TT[],
  topicName: (t: TT) => string,
  partitionIndex: (p: TT['partitions'][number]) => number,
): TT['partitions'][number] | null {
  if (topics.length !== 1 || topicName(topics[0]!) !== METADATA_TOPIC) return null;
  const partitions = topics[0]!.partitions;
  return partitions.length === 1 && partitionIndex(partitions[0]!) === METADATA_PARTITION ? partitions[0]! : null;
}

export interface SnapshotChunk {
  errorCode: number;
  size: number;
  position: number;
  unalignedRecords: Buffer;
}

/** One snapshot being copied from the leader. */
export class SnapshotFetch {
  private readonly chunks: Buffer[] = [];
  private positionValue = 0;

  constructor(readonly id: OffsetAndEpoch) {}

  get position(): number {
    return this.positionValue;
  }

  /** Takes the chunk at `position`; true once the snapshot is complete. A chunk at another position is dropped. */
  accept(position: number, size: number, bytes: Buffer): boolean {
    if (position !== this.positionValue || size < 0) return false;
    this.chunks.push(Buffer.from(bytes));
    this.positionValue += bytes.length;
    return this.positionValue >= size;
  }

  async write(fs: FileSystem, dir: string): Promise<void> {
    await fs.writeFileAtomic(posix.join(dir, snapshotFileName(this.id)), Buffer.concat(this.chunks));
    await fs.syncDir(dir);
  }

  /** The leader's side: the chunk of snapshot `snapshotId` from `position`, or the error (Kafka's FetchSnapshot errors). */
  static async serve(
    fs: FileSystem,
    log: RaftLog,
    request: { leaderError: number; snapshotId: OffsetAndEpoch; position: number; maxBytes: number },
  ): Promise<SnapshotChunk> {
    const failed = (errorCode: number): SnapshotChunk => ({ errorCode, size: -1, position: -1, unalignedRecords: Buffer.alloc(0) });
    if (request.leaderError !== ErrorCode.NONE) return failed(request.leaderError);
    if (!log.snapshots.some((id) => compareSnapshotIds(id, request.snapshotId) === 0)) return failed(ErrorCode.SNAPSHOT_NOT_FOUND);
    const data = await fs.readFile(posix.join(log.dir, snapshotFileName(request.snapshotId)));
    if (request.position < 0 || request.position >= data.length) return failed(ErrorCode.POSITION_OUT_OF_RANGE);
    const chunk = data.subarray(request.position, request.position + Math.max(1, request.maxBytes));
    return { errorCode: ErrorCode.NONE, size: data.length, position: request.position, unalignedRecords: chunk };
  }
}
