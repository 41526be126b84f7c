/**
 * dump-log prints Kafka's DumpLogSegments lines for .log, .index,
 * .timeindex and .txnindex files, decodes records and control markers with
 * --print-data-log, runs --index-sanity-check, and reports index entries
 * that do not match the log.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildControlBatch } from '../../src/protocol/records/control.js';
import { BATCH_FIELD, writeCrc } from '../../src/protocol/records/batch.js';
import { buildBatch } from '../../src/protocol/records/records.js';
import { dumpLogSegments, type DumpLogOptions } from '../../src/storage/dump-log.js';
import { DIR, type SimEnv, openLog, simEnv } from './helpers.js';

async function dump(env: SimEnv, options: DumpLogOptions) {
  const out: string[] = [];
  const err: string[] = [];
  await dumpLogSegments(env.fs, options, { out: (line) => out.push(line), err: (line) => err.push(line) });
  return { out, err };
}

async function sampleLog() {
  const env = simEnv();
  const log = await openLog(env, { indexIntervalBytes: 1 });
  await log.append(
    buildBatch({ records: [{ key: 'k1', value: 'hello', timestamp: 1000 }, { key: null, value: 'world', timestamp: 1005, headers: [{ key: 'h', value: 'v' }] }], producerId: 7, producerEpoch: 1, baseSequence: 10 }),
    { leaderEpoch: 3, assignOffsets: true },
  );
  await log.append(buildBatch({ records: [{ key: 'k', value: null, timestamp: 2000 }], compression: 1 }), { leaderEpoch: 3, assignOffsets: true });
  await log.append(buildControlBatch({ type: 'ABORT', producerId: 7, producerEpoch: 1, coordinatorEpoch: 5, timestamp: 3000 }), {
    leaderEpoch: 3,
    assignOffsets: true,
    origin: 'coordinator',
  });
  await log.appendAbortedTransaction({ producerId: 7, firstOffset: 0, lastOffset: 3, lastStableOffset: 0 });
  await log.close();
  return env;
}

describe('dump-log', () => {
  it('prints batch headers in Kafka\'s line format', async () => {
    const env = await sampleLog();
    const { out, err } = await dump(env, { files: [`${DIR}/00000000000000000000.log`] });
    assert.deepEqual(err, []);
    assert.equal(out[0], `Dumping ${DIR}/00000000000000000000.log`);
    assert.equal(out[1], 'Log starting offset: 0');
    assert.match(
      out[2]!,
      /^baseOffset: 0 lastOffset: 1 count: 2 baseSequence: 10 lastSequence: 11 producerId: 7 producerEpoch: 1 partitionLeaderEpoch: 3 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1005 size: \d+ magic: 2 compresscodec: none crc: \d+ isvalid: true$/,
    );
    assert.match(out[3]!, /^baseOffset: 2 lastOffset: 2 count: 1 .* compresscodec: gzip .* isvalid: true$/);
    assert.match(out[4]!, /^baseOffset: 3 lastOffset: 3 count: 1 baseSequence: -1 lastSequence: -1 producerId: 7 .* isTransactional: true isControl: true /);
    assert.equal(out.length, 5);
  });

  it('--print-data-log adds record lines with keys, payloads and control markers', async () => {
    const env = await sampleLog();
    const { out } = await dump(env, { files: [`${DIR}/00000000000000000000.log`], printDataLog: true });
    const records = out.filter((line) => line.startsWith('|'));
    assert.deepEqual(records, [
      '| offset: 0 CreateTime: 1000 keySize: 2 valueSize: 5 sequence: 10 headerKeys: [] key: k1 payload: hello',
      '| offset: 1 CreateTime: 1005 keySize: -1 valueSize: 5 sequence: 11 headerKeys: [h] payload: world',
      '| offset: 2 CreateTime: 2000 keySize: 1 valueSize: -1 sequence: -1 headerKeys: []',
      '| offset: 3 CreateTime: 3000 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: ABORT coordinatorEpoch: 5',
    ]);
  });

  it('prints index, time index and txn index entries; the sanity check passes', async () => {
    const env = await sampleLog();
    const { out, err } = await dump(env, {
      files: [`${DIR}/00000000000000000000.index`, `${DIR}/00000000000000000000.timeindex`, `${DIR}/00000000000000000000.txnindex`],
    });
    assert.deepEqual(err, []);
    // index.interval.bytes=1: every batch after the first is indexed at its position in the .log.
    const logLines = (await dump(env, { files: [`${DIR}/00000000000000000000.log`] })).out.slice(3);
    const expected = logLines.map((line) => `offset: ${/lastOffset: (\d+)/.exec(line)![1]} position: ${/position: (\d+)/.exec(line)![1]}`);
    assert.deepEqual(out.filter((line) => line.startsWith('offset: ')), expected);
    assert.ok(out.includes('timestamp: 2000 offset: 2'));
    assert.ok(out.includes('timestamp: 3000 offset: 3'));
    assert.ok(out.includes('version: 0 producerId: 7 firstOffset: 0 lastOffset: 3 lastStableOffset: 0'));
    const sanity = await dump(env, { files: [`${DIR}/00000000000000000000.index`, `${DIR}/00000000000000000000.timeindex`], indexSanityCheck: true });
    assert.deepEqual(sanity.out.filter((l) => !l.startsWith('Dumping')), [
      `${DIR}/00000000000000000000.index passed sanity check.`,
      `${DIR}/00000000000000000000.timeindex passed sanity check.`,
    ]);
  });

  it('reports index entries that name the wrong batch, and a failed sanity check', async () => {
    const env = await sampleLog();
    const path = `${DIR}/00000000000000000000.index`;
    const bytes = await env.fs.readFile(path);
    bytes.writeInt32BE(bytes.readInt32BE(0) + 1, 0);
    await env.fs.writeFileAtomic(path, bytes);
    const { err } = await dump(env, { files: [path] });
    assert.equal(err[0], `Mismatches in :${path}`);
    assert.match(err[1]!, /^ {2}Index offset: \d+, log offset: \d+$/);
    await env.fs.writeFileAtomic(path, bytes.subarray(0, 5));
    const sanity = await dump(env, { files: [path], indexSanityCheck: true });
    assert.match(sanity.out[1]!, /failed sanity check/);
  });

  it('reports trailing bytes that are not a whole batch', async () => {
    const env = await sampleLog();
    const handle = await env.fs.open(`${DIR}/00000000000000000000.log`, 'readWrite');
    await handle.write([Buffer.alloc(30, 1)], await handle.size());
    const { out } = await dump(env, { files: [`${DIR}/00000000000000000000.log`] });
    assert.equal(out.at(-1), 'Found 30 invalid bytes at the end of 00000000000000000000.log');
  });

  it('prints a nanosecond batch timestamp exactly and Long.MAX_VALUE as Kafka does, never "Infinity" (issue 9)', async () => {
    const env = simEnv();
    const log = await openLog(env, { indexIntervalBytes: 1 });
    for (const timestamp of [1_733_000_000_123_456_789n, 2n ** 63n - 1n]) {
      const batch = buildBatch({ records: [{ key: 'k', value: 'v', timestamp: 0 }] });
      batch.writeBigInt64BE(timestamp, BATCH_FIELD.baseTimestamp);
      batch.writeBigInt64BE(timestamp, BATCH_FIELD.maxTimestamp);
      writeCrc(batch, 0);
      await log.append(batch, { leaderEpoch: 0, assignOffsets: true });
    }
    await log.close();
    // The second batch is far past segment.ms after the first, so it opens segment 1, as in Kafka.
    const files = ['00000000000000000000.log', '00000000000000000001.log', '00000000000000000001.timeindex'].map((name) => `${DIR}/${name}`);
    const { out } = await dump(env, { files, printDataLog: true });
    assert.match(out.find((line) => line.startsWith('baseOffset: 0 '))!, / CreateTime: 1733000000123456789 /);
    assert.match(out.find((line) => line.startsWith('baseOffset: 1 '))!, / CreateTime: 9223372036854775807 /);
    assert.match(out.find((line) => line.startsWith('| offset: 1 '))!, / CreateTime: 9223372036854775807 /);
    assert.ok(out.includes('timestamp: 9223372036854775807 offset: 1'), out.join('\n'));
    assert.ok(!out.some((line) => line.includes('Infinity')), out.join('\n'));
  });
});
