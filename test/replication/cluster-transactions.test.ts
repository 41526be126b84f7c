/**
 * Transactions across brokers: three Spool brokers and a controller
 * started in this process by startCluster (real sockets, the follower
 * fetchers and the coordinators' WriteTxnMarkers over Kafka's wire), a
 * topic of six partitions with RF=2, so its leaders are spread over every
 * broker and whichever broker coordinates a transactional id leads only
 * some of its partitions: the others get their COMMIT or ABORT markers by
 * WriteTxnMarkers from the coordinator (src/txn/marker-channel.ts).
 *
 * Proves, with Spool's transactional producer:
 * - a committed transaction over all six partitions is visible to a
 *   read_committed consumer, an aborted one never is, and afterwards every
 *   partition's last stable offset is its high watermark (every marker was
 *   written, locally or by another broker);
 * - offsets sent in a committed transaction become the group's committed
 *   offsets (the group's `__consumer_offsets` leader may be a third broker);
 * - with the leader of some partitions killed, a transaction over all six
 *   still commits: the markers go to the new leaders the metadata names.
 *
 * Regression: the coordinator wrote every marker through its own replica
 * manager, so a partition led elsewhere answered NOT_LEADER_OR_FOLLOWER for
 * ever and the transaction stayed in PrepareCommit, holding the LSO back.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import { startCluster, type RunningCluster } from '../../src/node/cluster.js';
import { TRANSACTION_STATE_TOPIC, partitionFor } from '../../src/group/placement.js';
import { QUICK_FAILOVER_CONFIG } from './cluster-topic.js';

const TOPIC = 'txn-spread';
const PARTITIONS = 6;
const GROUP = 'txn-spread-group';
const CONFIG = {
  ...QUICK_FAILOVER_CONFIG,
  'transaction.state.log.num.partitions': 5,
  'offsets.topic.num.partitions': 5,
} as const;
/** Bound on every wait (generous: the machine is shared). */
const WAIT_MS = 60_000;

let cluster: RunningCluster;
let admin: Admin;

before(async () => {
  cluster = await startCluster({ controllers: 1, brokers: 3, config: CONFIG });
  admin = new Admin({ bootstrapServers: cluster.bootstrapServers });
  await admin.createTopics([{ name: TOPIC, numPartitions: PARTITIONS, replicationFactor: 2 }]);
});

after(async () => {
  await admin?.close();
  await cluster?.stop();
});

async function until<T>(what: string, probe: () => Promise<T | null> | T | null): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(50);
  }
}

/** Partition -> leader, from the most advanced running broker's image. */
function leaders(topic: string): Map<number, number> {
  const image = cluster.nodes.filter((n) => n.running && n.roles.includes('broker')).map((n) => n.node.metadata.image).sort((a, b) => b.offset - a.offset)[0];
  return new Map([...(image?.topicsByName.get(topic)?.partitions ?? new Map()).entries()].map(([partition, reg]) => [partition, reg.leader]));
}

async function transactionalProducer(transactionalId: string): Promise<Producer> {
  const producer = new Producer({ bootstrapServers: cluster.bootstrapServers, transactionalId, lingerMs: 0 });
  await producer.initTransactions();
  return producer;
}

/** Every read_committed value of the topic, once each partition's committed end is reached. */
async function readCommitted(): Promise<string[]> {
  const consumer = new Consumer({ bootstrapServers: cluster.bootstrapServers, isolationLevel: 'read_committed', autoOffsetReset: 'earliest' });
  const tps = Array.from({ length: PARTITIONS }, (_, partition) => ({ topic: TOPIC, partition }));
  consumer.assign(tps);
  try {
    const ends = await admin.listOffsets(tps.map((tp) => ({ ...tp, spec: 'latest' as const })), { isolationLevel: 'read_committed' });
    const values: string[] = [];
    await until('the read_committed consumer to reach the last stable offsets', async () => {
      for (const record of await consumer.poll(100)) values.push(record.value!.toString());
      const positions = await Promise.all(tps.map((tp) => consumer.position(tp)));
      return positions.every((position, i) => position >= ends[i]!.offset) ? true : null;
    });
    return values.sort();
  } finally {
    await consumer.close();
  }
}

/** Waits until every partition's last stable offset is its high watermark: no transaction left open or unmarked. */
async function allStable(): Promise<void> {
  const tps = Array.from({ length: PARTITIONS }, (_, partition) => ({ topic: TOPIC, partition, spec: 'latest' as const }));
  await until('every partition stable (LSO = HW)', async () => {
    const [committed, uncommitted] = await Promise.all([
      admin.listOffsets(tps, { isolationLevel: 'read_committed' }),
      admin.listOffsets(tps, { isolationLevel: 'read_uncommitted' }),
    ]);
    return committed.every((c, i) => c.offset === uncommitted[i]!.offset) ? true : null;
  });
}

const valuesOf = (prefix: string) => Array.from({ length: PARTITIONS }, (_, partition) => `${prefix}-${partition}`);

test('commit and abort over partitions led by every broker: markers reach the other leaders, read_committed sees the committed only', async () => {
  const led = await until('leaders for every partition', () => {
    const map = leaders(TOPIC);
    return map.size === PARTITIONS && [...map.values()].every((leader) => leader >= 0) ? map : null;
  });
  assert.equal(new Set(led.values()).size, 3, `the leaders are spread over the three brokers: ${JSON.stringify([...led])}`);

  const producer = await transactionalProducer('spread-1');
  try {
    producer.beginTransaction();
    await Promise.all(valuesOf('committed').map((value, partition) => producer.send({ topic: TOPIC, partition, value })));
    await producer.sendOffsetsToTransaction([{ topic: TOPIC, partition: 0, offset: 42 }], { groupId: GROUP, generationId: -1, memberId: '', groupInstanceId: null });
    await producer.commitTransaction();

    producer.beginTransaction();
    await Promise.all(valuesOf('aborted').map((value, partition) => producer.send({ topic: TOPIC, partition, value })));
    await producer.abortTransaction();
  } finally {
    await producer.close();
  }

  await allStable();
  assert.deepEqual(await readCommitted(), valuesOf('committed').sort());
  const offsets = await until('the group offsets committed by the transaction', async () => {
    const listed = await admin.listConsumerGroupOffsets(GROUP);
    return listed.length > 0 ? listed : null;
  });
  assert.deepEqual(offsets.map((o) => [o.topic, o.partition, o.offset]), [[TOPIC, 0, 42]]);
});

test('with a leader killed, a transaction over every partition commits: its markers go to the new leaders', async () => {
  // Kill a broker that leads some of the topic's partitions but is not the coordinator of the transactional id.
  const transactionalId = 'spread-2';
  const txnPartition = partitionFor(transactionalId, CONFIG['transaction.state.log.num.partitions']);
  const coordinator = leaders(TRANSACTION_STATE_TOPIC).get(txnPartition);
  const victimId = [...new Set(leaders(TOPIC).values())].find((leader) => leader !== coordinator);
  assert.ok(victimId !== undefined, 'a leader other than the coordinator');
  const victim = cluster.node(victimId);
  await victim.kill();
  await until(`the partitions of broker ${victimId} to have new leaders`, () => {
    const map = leaders(TOPIC);
    return [...map.values()].every((leader) => leader >= 0 && leader !== victimId) ? true : null;
  });

  const producer = await transactionalProducer(transactionalId);
  try {
    producer.beginTransaction();
    await Promise.all(valuesOf('after-kill').map((value, partition) => producer.send({ topic: TOPIC, partition, value })));
    await producer.commitTransaction();
  } finally {
    await producer.close();
  }
  await allStable();
  assert.deepEqual(await readCommitted(), [...valuesOf('committed'), ...valuesOf('after-kill')].sort());
  await victim.start();
});
