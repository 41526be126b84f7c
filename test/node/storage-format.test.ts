/**
 * Proves `spool storage` is kafka-storage.sh: `format` writes Kafka 4.4's
 * meta.properties and bootstrap snapshot (00000000000000000000-0000000000
 * .checkpoint: header, KRaft version and voters for a dynamic quorum, the
 * feature levels, footer) with Kafka's options, checks and messages; a node
 * starts from what it wrote; `random-uuid` prints a cluster id. Against
 * Kafka 4.4's own StorageTool (when its jars are there) the files are
 * byte-for-byte the same once the fields Kafka fills from the clock and the
 * random directory id are blanked.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerConfig } from '../../src/common/config.js';
import { silentLogger } from '../../src/common/logger.js';
import { ManualClock, SeededRandom } from '../../src/io/env.js';
import { realNetwork } from '../../src/io/net.js';
import { SimFileSystem } from '../../src/io/sim-fs.js';
import { readMetaProperties } from '../../src/metadata/meta-properties.js';
import { formatStorage, parseInitialControllers, type FormatOptions } from '../../src/node/formatter.js';
import { SpoolNode } from '../../src/node/node.js';
import { saltedPassword, scramKeys, scramMechanismNamed } from '../../src/security/scram.js';
import { kafkaSkipReason, runKafkaTool, TOOL } from '../interop/kafka/kafka.js';
import { spool } from '../cli/cli-io.js';

const CLUSTER_ID = 'MkU3OEVBNTcwNTJENDM2Qk';
const CHECKPOINT = '__cluster_metadata-0/00000000000000000000-0000000000.checkpoint';
const DYNAMIC = { 'process.roles': 'broker,controller', 'node.id': '1', 'controller.quorum.bootstrap.servers': '127.0.0.1:9093', listeners: 'PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093' };
const STATIC = { 'process.roles': 'broker,controller', 'node.id': '1', 'controller.quorum.voters': '1@127.0.0.1:9093', listeners: 'PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093' };

function simEnv(seed: number) {
  const clock = new ManualClock(1_700_000_000_000);
  return { fs: new SimFileSystem(new SeededRandom(seed)), clock, timers: clock, random: new SeededRandom(seed), net: realNetwork };
}

const format = (env: ReturnType<typeof simEnv>, settings: Record<string, string>, options: Partial<FormatOptions> = {}) =>
  formatStorage(env, BrokerConfig.fromObject({ 'log.dirs': '/data', ...settings }), { clusterId: CLUSTER_ID, initialVoters: { kind: 'static' }, ignoreFormatted: false, ...options });

test('format --standalone writes meta.properties and the bootstrap snapshot, and a node starts from them', async () => {
  const env = simEnv(1);
  const lines = await format(env, DYNAMIC, { initialVoters: { kind: 'standalone' } });
  assert.deepEqual(lines, [
    "Bootstrap metadata: BootstrapMetadata(records=[ApiMessageAndVersion(FeatureLevelRecord(name='metadata.version', featureLevel=25) at version 0), ApiMessageAndVersion(FeatureLevelRecord(name='share.version', featureLevel=1) at version 0), ApiMessageAndVersion(FeatureLevelRecord(name='transaction.version', featureLevel=2) at version 0)], metadataVersionLevel=25, source=format command)",
    'Formatting dynamic metadata voter directory /data with metadata.version 4.0-IV3.',
  ]);
  const meta = await readMetaProperties(env.fs, '/data');
  assert.deepEqual([meta?.clusterId, meta?.nodeId, meta?.version], [CLUSTER_ID, 1, 1]);
  const text = (await env.fs.readFile('/data/meta.properties')).toString();
  assert.deepEqual(text.split('\n').slice(2).map((line) => line.split('=')[0]), ['node.id', 'directory.id', 'version', 'cluster.id', '']);
  const snapshot = await env.fs.readFile(`/data/${CHECKPOINT}`);
  assert.ok(snapshot.includes(Buffer.from(meta!.directoryId, 'base64url')), 'the voter carries the metadata directory id');

  const config = BrokerConfig.fromObject({ 'log.dirs': '/data', ...DYNAMIC, listeners: 'PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0' });
  const node = new SpoolNode(config, env, silentLogger);
  await node.start();
  try {
    assert.equal(node.metadata.image.clusterId, CLUSTER_ID);
    assert.equal(node.metadata.image.features.get('metadata.version'), 25);
    assert.equal(node.metadata.image.features.get('transaction.version'), 2, 'Transactions V2, as Kafka formats a 4.0-IV3 cluster');
    assert.equal(node.metadata.image.brokers.get(1)?.fenced, false);
  } finally {
    await node.stop();
  }
});

test('--release-version picks the metadata.version; --feature sets the features Spool implements', async () => {
  const env = simEnv(2);
  const lines = await format(env, STATIC, { releaseVersion: '3.9' });
  assert.equal(lines[1], 'Formatting metadata directory /data with metadata.version 3.9-IV0.');
  assert.ok(lines[0]!.includes('featureLevel=21'));
  assert.ok(!lines[0]!.includes('transaction.version'), 'before 4.0-IV2 a cluster starts at transaction.version 0');
  const v1 = await format(simEnv(2), STATIC, { features: new Map([['transaction.version', 1]]) });
  assert.ok(v1[0]!.includes("FeatureLevelRecord(name='transaction.version', featureLevel=1)"));
  await assert.rejects(format(simEnv(3), STATIC, { releaseVersion: '4.4-IV2' }), /^FormatterError: Unknown metadata.version '4.4-IV2'. Supported metadata.version are: 3.3-IV3, .*, 4.0-IV3$/);
  await assert.rejects(format(simEnv(3), STATIC, { features: new Map([['group.version', 1]]) }), { message: 'Unsupported feature: group.version. Supported features are: kraft.version, transaction.version, eligible.leader.replicas.version, share.version' });
  // share.version: 1 by default (KIP-932 share groups), and `--feature share.version=0` leaves it unfinalized.
  assert.ok(lines[0]!.includes("FeatureLevelRecord(name='share.version', featureLevel=1)"));
  const noShare = await format(simEnv(2), STATIC, { features: new Map([['share.version', 0]]) });
  assert.ok(!noShare[0]!.includes('share.version'));
  const elr = await format(simEnv(2), STATIC, { features: new Map([['eligible.leader.replicas.version', 1]]) });
  assert.ok(elr[0]!.includes("FeatureLevelRecord(name='eligible.leader.replicas.version', featureLevel=1)"));
  assert.ok(!lines[0]!.includes('eligible.leader.replicas.version'), 'a 4.0 cluster starts without ELR, as Kafka before 4.1-IV0');
  await assert.rejects(format(simEnv(3), STATIC, { releaseVersion: '3.9', features: new Map([['eligible.leader.replicas.version', 1]]) }), /depends on metadata.version 4.0-IV1/);
  await assert.rejects(format(simEnv(3), STATIC, { releaseVersion: '4.0', features: new Map([['metadata.version', 25]]) }), {
    message: 'Use --release-version instead of --feature metadata.version=X to avoid ambiguity.',
  });
});

test('the quorum options are checked against the config, and formatted directories are refused unless ignored', async () => {
  await assert.rejects(format(simEnv(4), STATIC, { initialVoters: { kind: 'standalone' } }), /You cannot specify controller.quorum.voters and format the node with --initial-controllers or --standalone/);
  await assert.rejects(format(simEnv(4), DYNAMIC), {
    message: 'Because controller.quorum.voters is not set on this controller, you must specify one of the following: --standalone, --initial-controllers, or --no-initial-controllers.',
  });
  const env = simEnv(5);
  await format(env, STATIC);
  await assert.rejects(format(env, STATIC), { message: 'Log directory /data is already formatted. Use --ignore-formatted to ignore this directory and format the others.' });
  assert.equal((await format(env, STATIC, { ignoreFormatted: true })).at(-1), 'All of the log directories are already formatted.');
});

test('--add-scram writes UserScramCredentialRecords after the features, which a starting node replays; bad arguments get Kafka\'s messages', async () => {
  const env = simEnv(3);
  const lines = await format(env, STATIC, { scram: ['SCRAM-SHA-256=[name=alice,password=alice-secret]'] });
  assert.match(lines[0]!, /FeatureLevelRecord\(name='transaction.version', featureLevel=2\) at version 0\), ApiMessageAndVersion\(UserScramCredentialRecord\(name='alice', mechanism=1, salt=\[/);
  const config = BrokerConfig.fromObject({ 'log.dirs': '/data', ...STATIC, listeners: 'PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0' });
  const node = new SpoolNode(config, env, silentLogger);
  await node.start();
  try {
    const credential = node.metadata.image.scramCredentials.get('alice')?.get(1);
    assert.ok(credential !== undefined, 'the formatted credential is in the metadata image');
    assert.equal(credential.iterations, 4096, "Kafka's default iterations");
    assert.match(credential.salt.toString('ascii'), /^[0-9a-z]+$/, 'a random salt in base 36, as Kafka\'s ScramFormatter makes one');
    const salted = saltedPassword(scramMechanismNamed('SCRAM-SHA-256')!, 'alice-secret', credential.salt, 4096);
    assert.deepEqual(scramKeys(scramMechanismNamed('SCRAM-SHA-256')!, salted), { storedKey: credential.storedKey, serverKey: credential.serverKey });
  } finally {
    await node.stop();
  }
  const refusal = async (scram: string[], message: string, settings = STATIC, releaseVersion?: string) =>
    assert.rejects(format(simEnv(4), settings, { scram, ...(releaseVersion === undefined ? {} : { releaseVersion }) }), { message });
  await refusal(['SCRAM-SHA-1=[name=a,password=b]'], 'The add-scram mechanism SCRAM-SHA-1 is not supported.');
  await refusal(['SCRAM-SHA-256'], "Failed to find equals sign in SCRAM argument 'SCRAM-SHA-256'");
  await refusal(['SCRAM-SHA-256=name=a'], 'Expected configuration string to start with [');
  await refusal(['SCRAM-SHA-256=[name=a,password=b'], 'Expected configuration string to end with ]');
  await refusal(['SCRAM-SHA-256=[password=b]'], "You must supply 'name' to add-scram");
  await refusal(['SCRAM-SHA-256=[name=a]'], "You must supply one of 'password' or 'saltedpassword' to add-scram");
  await refusal(['SCRAM-SHA-256=[name=a,saltedpassword=YCE=]'], "You must supply 'salt' with 'saltedpassword' to add-scram");
  await refusal(['SCRAM-SHA-256=[name=a,password=b,salt=%%]'], 'Failed to decode given salt: %%');
  await refusal(['SCRAM-SHA-256=[name=a,password=b,iterations=x]'], 'Failed to parse iterations count: x');
  await refusal(['SCRAM-SHA-256=[name=a,password=b,iterations=4095]'], "The 'iterations' value must be >= 4096 for add-scram using SCRAM_SHA_256");
  await refusal(['SCRAM-SHA-512=[name=a,password=b,iterations=16385]'], "The 'iterations' value must be <= 16384 for add-scram using SCRAM_SHA_512");
  await refusal(['SCRAM-SHA-256=[name=a,password=b,pepper=c,colour=d]'], 'Unknown SCRAM configurations: colour, pepper');
  await refusal(['SCRAM-SHA-256=[name=a,password]'], 'No equals sign found in SCRAM component: password');
  await refusal(['SCRAM-SHA-256=[name=a,password=b]'], 'SCRAM is only supported in metadata.version 3.5-IV2 or later.', STATIC, '3.5-IV1');
});

test('--initial-controllers gives this node the directory id listed for it', async () => {
  const controllers = parseInitialControllers('1@c1:9093:JEXY6aqzQY-32P5TStzaFg,2@c2:9093:MvDxzVmcRsaTz33bUuRU6A');
  assert.deepEqual(controllers[1], { id: 2, host: 'c2', port: 9093, directoryId: 'MvDxzVmcRsaTz33bUuRU6A' });
  const env = simEnv(6);
  await format(env, DYNAMIC, { initialVoters: { kind: 'initial', controllers } });
  assert.equal((await readMetaProperties(env.fs, '/data'))?.directoryId, 'JEXY6aqzQY-32P5TStzaFg');
});

test('spool storage random-uuid prints a cluster id; format reads its options from the command line', async () => {
  const uuid = await spool(['storage', 'random-uuid']);
  assert.equal(uuid.code, 0);
  assert.match(uuid.out, /^[A-Za-z0-9_][A-Za-z0-9_-]{21}\n$/);
  const dir = await mkdtemp(join(tmpdir(), 'spool-format-'));
  try {
    await writeFile(join(dir, 'server.properties'), Object.entries({ ...DYNAMIC, 'log.dirs': join(dir, 'data') }).map(([k, v]) => `${k}=${v}`).join('\n'));
    const both = await spool(['storage', 'format', '-t', CLUSTER_ID, '-c', join(dir, 'server.properties'), '--standalone', '-N']);
    assert.equal(both.code, 1);
    const formatted = await spool(['storage', 'format', '-t', CLUSTER_ID, '-c', join(dir, 'server.properties'), '--no-initial-controllers']);
    assert.equal(formatted.code, 0, formatted.err);
    assert.match(formatted.out, /Formatting metadata directory .*data with metadata.version 4.0-IV3./);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

/** Reads a zigzag varint at `position`: [value, next position]. */
function varint(buffer: Buffer, position: number): [number, number] {
  let value = 0;
  let shift = 0;
  for (;;) {
    const byte = buffer[position++]!;
    value |= (byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return [(value >>> 1) ^ -(value & 1), position];
    shift += 7;
  }
}

/** Blanks what Kafka takes from the clock or from random: batch CRCs and timestamps, the header's timestamp, voters' directory ids. */
function blankVolatile(file: Buffer): Buffer {
  const copy = Buffer.from(file);
  for (let position = 0; position < copy.length; position += copy.readInt32BE(position + 8) + 12) {
    copy.fill(0, position + 17, position + 21);
    copy.fill(0, position + 27, position + 43);
    const control = (copy.readInt16BE(position + 21) & 0x20) !== 0;
    let cursor = position + 61;
    for (let record = 0; control && record < copy.readInt32BE(position + 57); record++) {
      const [length, start] = varint(copy, cursor);
      let [, at] = varint(copy, start + 1);
      [, at] = varint(copy, at);
      const [keyLength, keyAt] = varint(copy, at);
      const type = copy.readInt16BE(keyAt + 2);
      const [, valueAt] = varint(copy, keyAt + keyLength);
      if (type === 3) copy.fill(0, valueAt + 2, valueAt + 10);
      if (type === 6) copy.fill(0, valueAt + 7, valueAt + 23);
      cursor = start + length;
    }
  }
  return copy;
}

/** --add-scram with given salts, so both tools write the same credentials: a password, and a salted password. */
const FIXED_SCRAM = ['-S', 'SCRAM-SHA-256=[name=alice,salt="MWtf",iterations=4096,password=alice-secret]', '--add-scram', 'SCRAM-SHA-512=[name=bob,iterations=8192,salt="N3E=",saltedpassword="YCE="]'];

const blankMeta = (text: string) => text.replace(/^#[A-Z].*$/m, '#DATE').replace(/directory.id=.*/, 'directory.id=ID');

describe('byte for byte as Kafka 4.4\'s kafka-storage.sh format', { skip: kafkaSkipReason() ?? false }, () => {
  const cases = [
    { name: 'static voters', settings: STATIC, spool: [] as string[], kafka: [] as string[] },
    { name: '--standalone', settings: DYNAMIC, spool: ['--standalone'], kafka: ['--standalone'] },
    { name: '--no-initial-controllers', settings: DYNAMIC, spool: ['--no-initial-controllers'], kafka: ['--no-initial-controllers'] },
    { name: '--add-scram', settings: STATIC, spool: FIXED_SCRAM, kafka: FIXED_SCRAM },
  ];
  for (const testCase of cases) {
    test(testCase.name, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'spool-format-kafka-'));
      try {
        const outputs: Record<string, { meta: string; checkpoint: Buffer; out: string }> = {};
        for (const tool of ['spool', 'kafka'] as const) {
          const properties = join(dir, `${tool}.properties`);
          const data = join(dir, tool);
          await writeFile(properties, Object.entries({ ...testCase.settings, 'controller.listener.names': 'CONTROLLER', 'log.dirs': data }).map(([k, v]) => `${k}=${v}`).join('\n'));
          if (tool === 'spool') {
            const result = await spool(['storage', 'format', '-t', CLUSTER_ID, '-c', properties, ...testCase.spool]);
            assert.equal(result.code, 0, result.err);
            outputs[tool] = { meta: '', checkpoint: Buffer.alloc(0), out: result.out.replaceAll(data, 'DIR') };
          } else {
            // Kafka at Spool's metadata.version and Spool's default feature levels: group.version 0 (Kafka's default at
            // 4.0-IV3 is 1), share.version 1 (Kafka 4.4 finalizes it from 4.2-IV0; Spool on every new cluster).
            const args = ['format', '-t', CLUSTER_ID, '-c', properties, '--release-version', '4.0-IV3', '--feature', 'group.version=0', '--feature', 'share.version=1', ...testCase.kafka];
            const result = await runKafkaTool(TOOL.storage, args);
            assert.equal(result.code, 0, result.stderr);
            outputs[tool] = { meta: '', checkpoint: Buffer.alloc(0), out: result.stdout.replaceAll(data, 'DIR') };
          }
          outputs[tool]!.meta = blankMeta(await readFile(join(data, 'meta.properties'), 'utf8'));
          outputs[tool]!.checkpoint = blankVolatile(await readFile(join(data, CHECKPOINT)));
        }
        assert.equal(outputs.spool!.out, outputs.kafka!.out);
        assert.equal(outputs.spool!.meta, outputs.kafka!.meta);
        assert.equal(outputs.spool!.checkpoint.toString('hex'), outputs.kafka!.checkpoint.toString('hex'));
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  }
});
