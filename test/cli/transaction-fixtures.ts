/**
 * The transactions the `transactions` tool tests find on a broker: a
 * hanging one (a transactional batch of a producer id no coordinator gave
 * out, planted straight into the partition, as a lost coordinator state or
 * a pre-KIP-890 race leaves one) and an open one its coordinator knows
 * (InitProducerId, then a Transactions V2 Produce that adds the partition).
 */
import assert from 'node:assert/strict';
import type { RunningBroker } from '../../src/node/embedded.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/records.js';
import { Produce } from '../../src/protocol/schemas/00-produce.js';
import { FindCoordinator } from '../../src/protocol/schemas/10-find-coordinator.js';
import { InitProducerId } from '../../src/protocol/schemas/22-init-producer-id.js';
import { call, type WireClient } from '../server/wire-client.js';

const HOUR_MS = 3_600_000;

/** A transactional batch of `producerId` at partition 0 of `topic`, an hour old. */
export async function plantHangingTransaction(running: RunningBroker, topic: string, producerId: number): Promise<void> {
  const planted = await running.broker.replicaManager.appendRecords({
    timeoutMs: 5000, requiredAcks: -1, internalTopicsAllowed: false, origin: 'client',
    entries: [{ topicPartition: { topic, partition: 0 }, records: buildBatch({ records: [{ value: 'lost', timestamp: Date.now() - HOUR_MS }], producerId, producerEpoch: 0, baseSequence: 0, isTransactional: true }) }],
  });
  assert.equal(planted.get(`${topic}-0`)?.errorCode, ErrorCode.NONE);
}

/** Opens a transaction of `transactionalId` holding one record (a minute old) at partition 0 of `topic`; resolves with its producer id. */
export async function openTransaction(client: WireClient, topic: string, transactionalId: string): Promise<number> {
  for (;;) {
    const found = await call(client, FindCoordinator, 4, { keyType: 1, coordinatorKeys: [transactionalId] });
    if (found.coordinators[0]!.errorCode === ErrorCode.NONE) break;
  }
  const init = await call(client, InitProducerId, 5, { transactionalId, transactionTimeoutMs: 600_000, producerId: -1, producerEpoch: -1 });
  assert.equal(init.errorCode, ErrorCode.NONE);
  const produced = await call(client, Produce, 12, {
    transactionalId, acks: -1, timeoutMs: 5000,
    topicData: [{ name: topic, partitionData: [{ index: 0, records: buildBatch({ records: [{ value: 'open', timestamp: Date.now() - 60_000 }], producerId: init.producerId, producerEpoch: 0, baseSequence: 0, isTransactional: true }) }] }],
  });
  assert.equal(produced.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.NONE);
  return init.producerId;
}
