/**
 * Proves Spool's `__cluster_metadata` is Kafka's: Apache Kafka 4.4's own
 * DumpLogSegments (kafka-dump-log.sh --cluster-metadata-decoder) reads the
 * log segment and a snapshot written by a Spool broker, with valid CRCs,
 * the LeaderChange control record, and Spool's records decoded by Kafka's
 * metadata record serde. Skipped (outside CI) when the Kafka jars are not
 * set up.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker } from '../../src/node/embedded.js';
import { silentLogger } from '../../src/common/logger.js';
import { TOOL, kafkaSkipReason, runKafkaTool } from '../interop/kafka/kafka.js';

const skip = kafkaSkipReason();

test('Kafka\'s DumpLogSegments decodes Spool\'s metadata log and snapshot', { skip: skip ?? false, timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spool-metadata-dump-'));
  try {
    const broker = await startBroker({ config: { 'log.dirs': dir, 'metadata.log.max.record.bytes.between.snapshots': 1 }, logger: silentLogger });
    const [created] = await broker.broker.controller.createTopics(
      [{ name: 'dumped', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [{ name: 'retention.ms', value: '4242' }] }],
      { validateOnly: false },
    );
    await broker.broker.metadata.awaitSnapshots();
    await broker.stop();
    const metadataDir = join(dir, '__cluster_metadata-0');
    const files = readdirSync(metadataDir);
    const snapshot = files.filter((name) => name.endsWith('.checkpoint')).sort().at(-1);
    assert.ok(snapshot !== undefined, `no snapshot in ${files.join(', ')}`);
    for (const file of ['00000000000000000000.log', snapshot]) {
      const dump = await runKafkaTool(TOOL.dumpLog, ['--cluster-metadata-decoder', '--files', join(metadataDir, file)]);
      assert.equal(dump.code, 0, dump.stderr);
      assert.doesNotMatch(dump.stdout, /isvalid: false/);
      assert.match(dump.stdout, new RegExp(`"type":"TOPIC_RECORD","version":0,"data":\\{"name":"dumped","topicId":"${created!.topicId}"\\}`));
      assert.match(dump.stdout, /"type":"CONFIG_RECORD","version":0,"data":\{"resourceType":2,"resourceName":"dumped","name":"retention.ms","value":"4242"\}/);
      assert.match(dump.stdout, /"type":"FEATURE_LEVEL_RECORD","version":0,"data":\{"name":"metadata.version","featureLevel":25\}/);
      assert.equal((dump.stdout.match(/"type":"PARTITION_RECORD"/g) ?? []).length, 2);
    }
    const logDump = await runKafkaTool(TOOL.dumpLog, ['--cluster-metadata-decoder', '--files', join(metadataDir, '00000000000000000000.log')]);
    assert.match(logDump.stdout, /LeaderChange: \{"version":0,"leaderId":1,"voters":\[\{"voterId":1\}\],"grantingVoters":\[\{"voterId":1\}\]\}/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
