/**
 * The web console's JSON API against a live broker (console-fixture.ts's
 * workload), each figure checked against what Kafka's admin API answers
 * through Spool's Admin client:
 * - overview: cluster id and brokers as DescribeCluster; the quorum led by
 *   this node, its high watermark past the image's offset;
 * - topics and partitions as DescribeTopicPartitions (leader, epoch,
 *   replicas, ISR, ELR), positions as ListOffsets earliest / latest /
 *   latest read_committed (the open transaction holds the LSO);
 * - a partition's producers as DescribeProducers, its open transaction,
 *   segments that tile the log, the leader's replica states;
 * - records by offset and by timestamp (ListOffsets' answer for it),
 *   decoded keys, values (base64 for binary) and headers, the limit bounded;
 * - groups as ListGroups, committed offsets as OffsetFetch, lag against the
 *   high watermark, the live member's assignment as DescribeGroups;
 * - transactions as ListTransactions / DescribeTransactions;
 * - actions answer 403 while console.actions.enable is false and change
 *   nothing; enabled, delete-records moves the log start offset (ListOffsets
 *   earliest) and reset-offsets commits (OffsetFetch) for an empty group
 *   only; a cross-origin or non-JSON post is refused;
 * - the console is off unless console.listener is set.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker } from '../../src/node/embedded.js';
import { silentLogger } from '../../src/common/logger.js';
import { RECORDS_LIMIT_MAX } from '../../src/insight/record-browser.js';
import {
  BASE_TIMESTAMP_MS,
  BINARY_OFFSET,
  BINARY_VALUE,
  EMPTY_GROUP,
  EMPTY_GROUP_OFFSETS,
  HTML_OFFSET,
  HTML_VALUE,
  LIVE_GROUP,
  LIVE_GROUP_OFFSET,
  OPEN_TXN_FIRST_OFFSET,
  PARTITION_0_END_OFFSET,
  TOPIC,
  TRANSACTIONAL_ID,
  getJson,
  localPartition,
  postJson,
  startConsoleFixture,
  type ConsoleFixture,
} from './console-fixture.js';

const enc = encodeURIComponent;

async function positionsByAdmin(fixture: ConsoleFixture, partition: number) {
  const tp = { topic: TOPIC, partition };
  const [earliest] = await fixture.admin.listOffsets([{ ...tp, spec: 'earliest' }]);
  const [latest] = await fixture.admin.listOffsets([{ ...tp, spec: 'latest' }]);
  const [committed] = await fixture.admin.listOffsets([{ ...tp, spec: 'latest' }], { isolationLevel: 'read_committed' });
  return { logStartOffset: earliest!.offset, highWatermark: latest!.offset, lastStableOffset: committed!.offset };
}

describe('console API, actions disabled (the default)', () => {
  let fixture: ConsoleFixture;
  before(async () => {
    fixture = await startConsoleFixture();
  });
  after(async () => {
    await fixture?.close();
  });
  const api = (path: string) => getJson(fixture.consoleUrl, path);

  test('overview: cluster, brokers and quorum as the admin API and the Raft client say', async () => {
    const { status, body } = await api('overview');
    assert.equal(status, 200);
    const cluster = await fixture.admin.describeCluster();
    assert.equal(body.clusterId, cluster.clusterId);
    assert.equal(body.nodeId, 1);
    assert.deepEqual([...body.roles].sort(), ['broker', 'controller']);
    assert.equal(body.actionsEnabled, false);
    assert.deepEqual(body.brokers.map((b: any) => [b.id, b.host, b.port, b.fenced, b.inControlledShutdown]), cluster.brokers.map((b) => [b.nodeId, b.host, b.port, false, false]));
    assert.equal(body.quorum.leaderId, 1);
    assert.deepEqual(body.quorum.voters.map((v: any) => v.id), [1]);
    assert.ok(body.quorum.highWatermark > body.metadataOffset, `quorum HW ${body.quorum.highWatermark} is past the image at ${body.metadataOffset}`);
    assert.equal(body.quorum.voters[0].logEndOffset >= body.quorum.highWatermark, true);
  });

  test('topics and topic: registrations as DescribeTopicPartitions, positions as ListOffsets', async () => {
    const listed = await api('topics');
    assert.equal(listed.status, 200);
    const [described] = await fixture.admin.describeTopics([TOPIC]);
    const row = listed.body.find((t: any) => t.name === TOPIC);
    assert.deepEqual(row, { name: TOPIC, topicId: described!.topicId, partitions: 2, replicationFactor: 1, internal: false, underReplicated: 0, offline: 0 });

    const { status, body } = await api(`topics/${TOPIC}`);
    assert.equal(status, 200);
    assert.equal(body.topicId, described!.topicId);
    for (const expected of described!.partitions) {
      const shown = body.partitions.find((p: any) => p.partition === expected.partition);
      assert.deepEqual([shown.leader, shown.leaderEpoch, shown.replicas, shown.isr, shown.elr, shown.lastKnownElr], [expected.leader, expected.leaderEpoch, expected.replicas, expected.isr, expected.elr ?? [], expected.lastKnownElr ?? []]);
      const positions = await positionsByAdmin(fixture, expected.partition);
      assert.deepEqual({ logStartOffset: shown.local.logStartOffset, highWatermark: shown.local.highWatermark, lastStableOffset: shown.local.lastStableOffset }, positions);
      assert.equal(shown.local.logEndOffset, positions.highWatermark, 'one replica: the high watermark is the log end');
    }
    const p0 = body.partitions.find((p: any) => p.partition === 0);
    assert.equal(p0.local.lastStableOffset, OPEN_TXN_FIRST_OFFSET, 'the open transaction holds the last stable offset');
    assert.equal(p0.local.highWatermark, PARTITION_0_END_OFFSET);

    assert.equal((await api('topics/no-such-topic')).status, 404);
    assert.equal((await api(`topics/${TOPIC}/partitions/7`)).status, 404);
    assert.equal((await api(`topics/${TOPIC}/partitions/x`)).status, 400);
  });

  test('partition: producers as DescribeProducers, the open transaction, segments, replica states', async () => {
    const { status, body } = await api(`topics/${TOPIC}/partitions/0`);
    assert.equal(status, 200);
    const producers = await fixture.admin.describeProducers({ topic: TOPIC, partition: 0 });
    assert.deepEqual(
      body.producers.map((p: any) => [p.producerId, p.producerEpoch, p.lastSequence, p.lastTimestamp, p.currentTxnStartOffset]).sort(),
      producers.map((p) => [p.producerId, p.producerEpoch, p.lastSequence, p.lastTimestamp, p.currentTransactionStartOffset ?? -1]).sort(),
    );
    const txn = await fixture.admin.describeTransaction(TRANSACTIONAL_ID);
    assert.equal(body.openTransactions.length, 1);
    const open = body.openTransactions[0];
    assert.deepEqual([open.producerId, open.producerEpoch, open.firstOffset, open.holdsLastStableOffset], [txn.producerId, txn.producerEpoch, OPEN_TXN_FIRST_OFFSET, true]);
    assert.ok(open.ageMs >= 0);

    // The segments tile the log: each ends where the next begins, the first at the log start, the last at the log end.
    const segments = body.segments;
    // Rolled after 5 and 10 records, and once more by segment.ms (7 days) at the transaction: its batches carry
    // the current time, more than 7 days after the first batch of the segment (BASE_TIMESTAMP_MS), as Kafka rolls.
    assert.equal(body.segmentCount, 4);
    assert.deepEqual(segments.map((s: any) => s.baseOffset), [0, 5, 10, OPEN_TXN_FIRST_OFFSET]);
    for (const [index, segment] of segments.entries()) {
      const next = segments[index + 1];
      assert.equal(segment.nextOffset, next === undefined ? body.local.logEndOffset : next.baseOffset);
      assert.ok(segment.sizeBytes > 0);
    }
    assert.equal(segments.reduce((sum: number, s: any) => sum + s.sizeBytes, 0), body.local.sizeBytes);
    assert.deepEqual([segments[0].firstTimestamp, segments[0].maxTimestamp], [BASE_TIMESTAMP_MS, BASE_TIMESTAMP_MS + 4000]);
    const sizes = localPartition(fixture.running, 0).log.logSegments.map((s) => [s.offsetIndex.entries, s.timeIndex.entries]);
    assert.deepEqual(segments.map((s: any) => [s.offsetIndexEntries, s.timeIndexEntries]), sizes);

    assert.deepEqual(body.replicaStates.map((r: any) => [r.brokerId, r.logEndOffset, r.inIsr]), [[1, PARTITION_0_END_OFFSET, true]]);
  });

  test('records by offset: decoded keys, values and headers, batch info, flags above the LSO', async () => {
    const { status, body } = await api(`topics/${TOPIC}/partitions/0/records?offset=3&limit=4`);
    assert.equal(status, 200);
    assert.deepEqual(body.records.map((r: any) => r.offset), [3, 4, 5, 6]);
    const third = body.records[0];
    assert.deepEqual([third.key, third.value, third.timestamp], [{ encoding: 'utf8', data: 'key-3', sizeBytes: 5, truncated: false }, { encoding: 'utf8', data: 'value-3', sizeBytes: 7, truncated: false }, BASE_TIMESTAMP_MS + 3000]);
    assert.deepEqual(third.headers, [{ key: 'trace', value: { encoding: 'utf8', data: 't-3', sizeBytes: 3, truncated: false } }]);
    assert.equal(third.batch.isTransactional, false);
    assert.equal(body.nextOffset, 7);

    const tail = await api(`topics/${TOPIC}/partitions/0/records?offset=${BINARY_OFFSET}&limit=10`);
    const [binary, html, ...txn] = tail.body.records;
    assert.deepEqual([binary.key, binary.value], [null, { encoding: 'base64', data: BINARY_VALUE.toString('base64'), sizeBytes: BINARY_VALUE.length, truncated: false }]);
    assert.equal(html.offset, HTML_OFFSET);
    assert.equal(html.value.data, HTML_VALUE);
    const producerId = (await fixture.admin.describeTransaction(TRANSACTIONAL_ID)).producerId;
    assert.deepEqual(txn.map((r: any) => [r.offset, r.batch.isTransactional, r.batch.producerId, r.aboveLastStableOffset, r.aboveHighWatermark]), [
      [OPEN_TXN_FIRST_OFFSET, true, producerId, true, false],
      [OPEN_TXN_FIRST_OFFSET + 1, true, producerId, true, false],
    ]);
    assert.equal(tail.body.nextOffset, PARTITION_0_END_OFFSET);
  });

  test('records by timestamp start where ListOffsets finds the timestamp; the limit is bounded', async () => {
    const timestamp = BASE_TIMESTAMP_MS + 7500;
    const [listed] = await fixture.admin.listOffsets([{ topic: TOPIC, partition: 0, spec: timestamp }]);
    const { body } = await api(`topics/${TOPIC}/partitions/0/records?timestamp=${timestamp}&limit=2`);
    assert.equal(body.startOffset, listed!.offset);
    assert.deepEqual(body.records.map((r: any) => r.offset), [8, 9]);

    const late = await api(`topics/${TOPIC}/partitions/0/records?timestamp=${BASE_TIMESTAMP_MS * 2}`);
    assert.deepEqual([late.status, late.body.startOffset, late.body.records], [200, null, []]);
    assert.equal((await api(`topics/${TOPIC}/partitions/0/records?limit=${RECORDS_LIMIT_MAX + 1}`)).status, 400);
    assert.equal((await api(`topics/${TOPIC}/partitions/0/records?offset=${PARTITION_0_END_OFFSET + 1}`)).status, 416);
    assert.equal((await api(`topics/${TOPIC}/partitions/0/records?limit=${RECORDS_LIMIT_MAX}`)).body.records.length, PARTITION_0_END_OFFSET);
  });

  test('groups: as ListGroups; committed offsets as OffsetFetch, lag against the high watermark; the live member', async () => {
    const { body } = await api('groups');
    const listed = await fixture.admin.listGroups();
    const ours = body.filter((g: any) => g.groupId === EMPTY_GROUP || g.groupId === LIVE_GROUP);
    assert.deepEqual(
      ours.map((g: any) => [g.groupId, g.protocol, g.state]).sort(),
      listed.filter((g) => g.groupId === EMPTY_GROUP || g.groupId === LIVE_GROUP).map((g) => [g.groupId, g.type, g.groupState]).sort(),
    );
    assert.deepEqual(ours.map((g: any) => [g.groupId, g.state, g.members]).sort(), [[EMPTY_GROUP, 'Empty', 0], [LIVE_GROUP, 'Stable', 1]].sort());

    const empty = (await api(`groups/${enc(EMPTY_GROUP)}`)).body;
    const committed = await fixture.admin.listConsumerGroupOffsets(EMPTY_GROUP);
    const highWatermarks = await Promise.all([0, 1].map(async (p) => (await positionsByAdmin(fixture, p)).highWatermark));
    assert.deepEqual(
      empty.offsets.map((o: any) => [o.topic, o.partition, o.committedOffset, o.highWatermark, o.lag]),
      committed.sort((a, b) => a.partition - b.partition).map((c) => [c.topic, c.partition, c.offset, highWatermarks[c.partition], highWatermarks[c.partition]! - c.offset]),
    );
    assert.deepEqual(empty.offsets.map((o: any) => o.committedOffset), [...EMPTY_GROUP_OFFSETS]);

    const live = (await api(`groups/${enc(LIVE_GROUP)}`)).body;
    const [described] = await fixture.admin.describeConsumerGroups([LIVE_GROUP]);
    assert.equal(live.state, described!.groupState);
    assert.equal(live.protocol, 'classic');
    assert.equal(live.assignor, described!.partitionAssignor);
    assert.deepEqual(live.members.map((m: any) => [m.memberId, m.clientId, m.assignment]), described!.members.map((m) => [m.memberId, m.clientId, [{ topic: TOPIC, partitions: m.assignment.map((tp) => tp.partition).sort() }]]));
    assert.deepEqual(live.offsets.map((o: any) => [o.partition, o.committedOffset, o.lag, o.memberId]), [
      [0, LIVE_GROUP_OFFSET, highWatermarks[0]! - LIVE_GROUP_OFFSET, described!.members[0]!.memberId],
      [1, null, null, described!.members[0]!.memberId],
    ]);
    assert.equal((await api('groups/no-such-group')).status, 404);
  });

  test('a group id holding a slash is one path segment, percent-encoded', async () => {
    const groupId = 'team/a';
    await fixture.admin.alterConsumerGroupOffsets(groupId, [{ topic: TOPIC, partition: 1, offset: 1 }]);
    const { status, body } = await api(`groups/${enc(groupId)}`);
    assert.equal(status, 200);
    assert.equal(body.groupId, groupId);
    assert.deepEqual(body.offsets.map((o: any) => [o.partition, o.committedOffset]), [[1, 1]]);
  });

  test('transactions: as ListTransactions and DescribeTransactions, and what holds the LSO', async () => {
    const { body } = await api('transactions');
    const described = await fixture.admin.describeTransaction(TRANSACTIONAL_ID);
    const listed = [...(await fixture.admin.listTransactions()).values()].flat();
    assert.deepEqual(body.transactionalIds.map((t: any) => t.transactionalId), listed.map((t) => t.transactionalId));
    const shown = body.transactionalIds[0];
    assert.deepEqual(
      [shown.state, shown.producerId, shown.producerEpoch, shown.transactionTimeoutMs, shown.transactionStartTimeMs, shown.partitions],
      [described.state, described.producerId, described.producerEpoch, described.transactionTimeoutMs, described.transactionStartTimeMs, described.topicPartitions],
    );
    assert.equal(shown.state, 'Ongoing');
    const { lastStableOffset } = await positionsByAdmin(fixture, 0);
    assert.deepEqual(body.openTransactions.map((t: any) => [t.topic, t.partition, t.producerId, t.firstOffset, t.lastStableOffset]), [[TOPIC, 0, described.producerId, OPEN_TXN_FIRST_OFFSET, lastStableOffset]]);
  });

  test('actions are refused (403) while console.actions.enable is false, and change nothing', async () => {
    const before = await positionsByAdmin(fixture, 1);
    const deleted = await postJson(fixture.consoleUrl, `topics/${TOPIC}/partitions/1/delete-records?before=2`);
    assert.deepEqual([deleted.status, deleted.body.error], [403, 'ACTIONS_DISABLED']);
    const reset = await postJson(fixture.consoleUrl, `groups/${enc(EMPTY_GROUP)}/reset-offsets`, { to: 'earliest' });
    assert.deepEqual([reset.status, reset.body.error], [403, 'ACTIONS_DISABLED']);
    assert.deepEqual(await positionsByAdmin(fixture, 1), before);
    assert.deepEqual((await fixture.admin.listConsumerGroupOffsets(EMPTY_GROUP)).map((o) => o.offset).sort((a, b) => a - b), [...EMPTY_GROUP_OFFSETS].sort((a, b) => a - b));
    assert.equal((await fetch(`${fixture.consoleUrl}/api/topics`, { method: 'POST' })).status, 405);
  });

  test('the page and its assets are served with a content security policy', async () => {
    for (const path of ['/', '/static/app.js', '/static/style.css']) {
      const response = await fetch(`${fixture.consoleUrl}${path}`);
      assert.equal(response.status, 200, path);
      assert.match(response.headers.get('content-security-policy') ?? '', /script-src 'self'/);
      assert.ok((await response.text()).length > 100);
    }
    assert.equal((await fetch(`${fixture.consoleUrl}/nothing-here`)).status, 404);
  });
});

describe('console API, actions enabled', () => {
  let fixture: ConsoleFixture;
  before(async () => {
    fixture = await startConsoleFixture({ 'console.actions.enable': true });
  });
  after(async () => {
    await fixture?.close();
  });

  test('delete-records moves the log start offset, as ListOffsets earliest then says', async () => {
    const deleted = await postJson(fixture.consoleUrl, `topics/${TOPIC}/partitions/1/delete-records?before=3`);
    assert.deepEqual([deleted.status, deleted.body.lowWatermark], [200, 3]);
    assert.equal((await positionsByAdmin(fixture, 1)).logStartOffset, 3);
    const past = await postJson(fixture.consoleUrl, `topics/${TOPIC}/partitions/1/delete-records?before=999`);
    assert.deepEqual([past.status, past.body.error], [416, 'OFFSET_OUT_OF_RANGE']);
    assert.equal((await postJson(fixture.consoleUrl, `topics/${TOPIC}/partitions/1/delete-records`)).status, 400);
  });

  test('reset-offsets commits for an empty group (OffsetFetch shows it) and refuses a group with members', async () => {
    const earliest = await postJson(fixture.consoleUrl, `groups/${enc(EMPTY_GROUP)}/reset-offsets`, { to: 'earliest' });
    assert.equal(earliest.status, 200);
    const starts = await Promise.all([0, 1].map(async (p) => (await positionsByAdmin(fixture, p)).logStartOffset));
    assert.deepEqual(earliest.body.partitions.map((p: any) => [p.partition, p.offset, p.error]), [[0, starts[0], null], [1, starts[1], null]]);
    const offsets = async () => (await fixture.admin.listConsumerGroupOffsets(EMPTY_GROUP)).sort((a, b) => a.partition - b.partition).map((o) => o.offset);
    assert.deepEqual(await offsets(), starts);

    // --to-offset is clamped into [log start, high watermark], as kafka-consumer-groups clamps it.
    const toOffset = await postJson(fixture.consoleUrl, `groups/${enc(EMPTY_GROUP)}/reset-offsets`, { to: 'offset', offset: 4, topic: TOPIC });
    const highWatermark1 = (await positionsByAdmin(fixture, 1)).highWatermark;
    assert.deepEqual(toOffset.body.partitions.map((p: any) => p.offset), [4, Math.min(4, highWatermark1)]);
    const latest = await postJson(fixture.consoleUrl, `groups/${enc(EMPTY_GROUP)}/reset-offsets`, { to: 'latest' });
    assert.equal(latest.status, 200);
    assert.deepEqual(await offsets(), await Promise.all([0, 1].map(async (p) => (await positionsByAdmin(fixture, p)).highWatermark)));

    const busy = await postJson(fixture.consoleUrl, `groups/${enc(LIVE_GROUP)}/reset-offsets`, { to: 'earliest' });
    assert.deepEqual([busy.status, busy.body.error], [409, 'NON_EMPTY_GROUP']);
    assert.equal((await fixture.admin.listConsumerGroupOffsets(LIVE_GROUP)).find((o) => o.partition === 0)!.offset, LIVE_GROUP_OFFSET);
    assert.equal((await postJson(fixture.consoleUrl, `groups/${enc(EMPTY_GROUP)}/reset-offsets`, { to: 'somewhere' })).status, 400);
  });

  test('an action posted cross-origin or not as JSON is refused', async () => {
    const crossOrigin = await postJson(fixture.consoleUrl, `topics/${TOPIC}/partitions/1/delete-records?before=4`, {}, { origin: 'http://evil.example' });
    assert.deepEqual([crossOrigin.status, crossOrigin.body.error], [403, 'CROSS_ORIGIN']);
    const form = await fetch(`${fixture.consoleUrl}/api/topics/${TOPIC}/partitions/1/delete-records?before=4`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'x=1' });
    assert.equal(form.status, 415);
    assert.equal((await positionsByAdmin(fixture, 1)).logStartOffset, 3, 'the log start offset did not move');
  });
});

test('the console is off unless console.listener is set', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'spool-console-off-'));
  const running = await startBroker({ config: { 'log.dirs': dir }, logger: silentLogger });
  try {
    assert.equal(running.broker.consoleListener, null);
  } finally {
    await running.stop();
    await rm(dir, { recursive: true, force: true });
  }
});
