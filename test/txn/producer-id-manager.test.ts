/**
 * Proves the producer-id manager serves ids from controller blocks without
 * gaps or repeats, asks for the next block once 90% of the current one is
 * used (one request at a time), moves to it when the current block runs out,
 * and answers COORDINATOR_LOAD_IN_PROGRESS when the controller cannot
 * allocate.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ProducerIdManager, type ProducerIdBlock } from '../../src/txn/producer-id-manager.js';

class FakeController {
  requests = 0;
  failing = false;
  private next = 0;
  constructor(private readonly size: number) {}
  async allocateProducerIdBlock(brokerId: number): Promise<ProducerIdBlock> {
    assert.equal(brokerId, 1);
    this.requests++;
    if (this.failing) throw new Error('controller unavailable');
    const block = { firstProducerId: this.next, size: this.size };
    this.next += this.size;
    return block;
  }
}

test('ids come from consecutive blocks with no gaps or repeats; the next block is prefetched at 90%', async () => {
  const controller = new FakeController(10);
  const manager = new ProducerIdManager(1, controller);
  const ids: number[] = [];
  for (let i = 0; i < 9; i++) {
    const result = await manager.generateProducerId();
    assert.equal(result.errorCode, ErrorCode.NONE);
    ids.push(result.producerId);
  }
  assert.equal(controller.requests, 2, 'the 9th id of 10 triggered the prefetch');
  for (let i = 0; i < 16; i++) ids.push((await manager.generateProducerId()).producerId);
  assert.deepEqual(ids, Array.from({ length: 25 }, (_, i) => i));
  assert.equal(controller.requests, 3);
});

test('concurrent requests for the first id share one block request', async () => {
  const controller = new FakeController(100);
  const manager = new ProducerIdManager(1, controller);
  const results = await Promise.all([manager.generateProducerId(), manager.generateProducerId(), manager.generateProducerId()]);
  assert.deepEqual(results.map((r) => r.producerId).sort(), [0, 1, 2]);
  assert.equal(controller.requests, 1);
});

test('a controller failure answers COORDINATOR_LOAD_IN_PROGRESS, and a later request recovers', async () => {
  const controller = new FakeController(5);
  controller.failing = true;
  const manager = new ProducerIdManager(1, controller);
  const failed = await manager.generateProducerId();
  assert.equal(failed.errorCode, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  assert.equal(failed.producerId, -1);
  controller.failing = false;
  const recovered = await manager.generateProducerId();
  assert.deepEqual(recovered, { producerId: 0, errorCode: ErrorCode.NONE });
});
