/**
 * Kafka 4.4's kafka-share-groups.sh (ShareGroupCommand) against a live
 * Spool broker, and against a live Kafka 4.4 broker with the same
 * assertions, after the Java KafkaShareConsumer consumed and acknowledged
 * every record of a topic: --list names the group; --describe shows its
 * start offset at the log end and lag 0; once the consumer is gone the
 * group is Empty, --reset-offsets --to-earliest --execute moves the start
 * offset to 0 (lag = every record), and a consumer joining then is given
 * every record again; --delete-offsets forgets the topic's state;
 * --delete removes the group. On Spool, `spool share-groups --describe`
 * prints what Kafka's tool printed, byte for byte.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runKafkaTool } from '../kafka/kafka.js';
import { spool } from '../../cli/cli-io.js';
import { Driver, deliveries, prepareTopic, runToEnd, skipReason, startTarget, type Broker } from './share-driver.js';

const SHARE_GROUP_COMMAND = 'org.apache.kafka.tools.consumer.group.ShareGroupCommand';
const RECORDS = 30;

async function tool(broker: Broker, args: readonly string[]): Promise<string> {
  const result = await runKafkaTool(SHARE_GROUP_COMMAND, ['--bootstrap-server', broker.bootstrap, ...args]);
  assert.equal(result.code, 0, `kafka-share-groups.sh ${args.join(' ')}: ${result.stderr}\n${result.stdout}`);
  return result.stdout;
}

/** The rows of a --describe --offsets table: topic, partition, start offset, lag. */
function offsetRows(text: string, group: string): { topic: string; partition: string; startOffset: string; lag: string }[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${group} `))
    .map((line) => {
      const [, topic, partition, startOffset, lag] = line.trim().split(/\s+/);
      return { topic: topic!, partition: partition!, startOffset: startOffset!, lag: lag! };
    });
}

async function consumeAll(broker: Broker, group: string, topic: string, name: string, count: number): Promise<void> {
  const consumer = new Driver(['consume', broker.bootstrap, group, topic, name, '-']);
  try {
    const acked = () => consumer.lines.filter((line) => line.startsWith(`acked ${name}`)).flatMap((line) => line.split(' ').slice(2)).length;
    await consumer.until(`${count} acknowledged records`, () => acked() >= count);
    await consumer.stop();
    assert.equal(new Set(deliveries([consumer]).map((delivery) => delivery.value)).size, count);
  } finally {
    await consumer.kill();
  }
}

for (const target of ['spool', 'kafka'] as const) {
  test(`${target}: kafka-share-groups.sh lists, describes, resets, deletes offsets and deletes a share group`, { timeout: 300_000 }, async (t) => {
    const skip = skipReason('kafka') ?? skipReason(target);
    if (skip !== undefined) return t.skip(skip);
    const broker = await startTarget(target);
    try {
      const topic = 'tool-topic';
      const group = 'tool-group';
      await prepareTopic(broker, topic, group);
      await runToEnd(['produce', broker.bootstrap, topic, '0', String(RECORDS)]);
      await consumeAll(broker, group, topic, 'first', RECORDS);

      assert.match(await tool(broker, ['--list']), new RegExp(`^${group}$`, 'm'));
      const described = await tool(broker, ['--describe', '--group', group]);
      // Lag 0: every record acknowledged. The start offset itself may trail (Kafka persists the start offset an
      // acknowledgement moved with the next write, counting the records above it as delivered).
      const [row] = offsetRows(described, group);
      assert.deepEqual([row?.topic, row?.partition, row?.lag], [topic, '0', '0'], described);
      assert.ok(Number(row!.startOffset) > 0 && Number(row!.startOffset) <= RECORDS, described);
      if (target === 'spool') {
        const ours = await spool(['share-groups', '--bootstrap-server', broker.bootstrap, '--describe', '--group', group]);
        assert.equal(ours.out, described);
      }
      const state = await tool(broker, ['--describe', '--group', group, '--state']);
      assert.match(state, /Empty/, state);

      await tool(broker, ['--reset-offsets', '--group', group, '--topic', topic, '--to-earliest', '--execute']);
      const reset = await tool(broker, ['--describe', '--group', group]);
      assert.deepEqual(offsetRows(reset, group), [{ topic, partition: '0', startOffset: '0', lag: String(RECORDS) }], reset);
      await consumeAll(broker, group, topic, 'second', RECORDS);

      await tool(broker, ['--delete-offsets', '--group', group, '--topic', topic]);
      const afterDelete = await tool(broker, ['--describe', '--group', group]);
      assert.deepEqual(offsetRows(afterDelete, group).filter((row) => row.startOffset !== '-'), [], afterDelete);
      await tool(broker, ['--delete', '--group', group]);
      assert.doesNotMatch(await tool(broker, ['--list']), new RegExp(`^${group}$`, 'm'));
    } catch (error) {
      throw new Error(`${String(error)}\n${broker.output().slice(-3000)}`);
    } finally {
      await broker.stop();
    }
  });
}
