/**
 * What a replica of a partition holds up to its high watermark, as record
 * values in offset order: how the real-cluster replication tests compare
 * replicas with what was acknowledged.
 */
import type { SpoolNode } from '../../src/node/node.js';
import { iterateBatches } from '../../src/protocol/records/batch.js';
import { decodeRecords } from '../../src/protocol/records/records.js';

/** The values of partition 0 of `topic` on `node` below its high watermark (CRCs checked). */
export async function committedValuesOn(node: SpoolNode, topic: string): Promise<string[]> {
  const partition = node.replicaManager.hostedPartitions().find((p) => p.topicPartition.topic === topic && p.topicPartition.partition === 0)!;
  const log = partition.log;
  const read = await log.read(log.logStartOffset, { maxBytes: 1 << 26, maxOffset: log.highWatermark });
  const values: string[] = [];
  for (const { position, header } of iterateBatches(read.records)) {
    const decoded = decodeRecords(read.records.subarray(position, position + header.sizeBytes), { checkCrc: true });
    for (const record of decoded.records ?? []) values.push(record.value!.toString());
  }
  return values;
}
