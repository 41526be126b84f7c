/**
 * Test harness for the share coordinator: an in-memory `__share_group_state`
 * log (the group tests' MemoryLog), a metadata image with chosen topics,
 * and a coordinator on a ManualClock, loaded on every state partition.
 */
import { ShareCoordinator } from '../../../src/share/coordinator/coordinator.js';
import { DEFAULT_SHARE_COORDINATOR_CONFIG, type ShareCoordinatorConfig } from '../../../src/share/coordinator/config.js';
import { decodeShareRecord, type ShareCoordinatorRecord } from '../../../src/share/coordinator/records.js';
import { ManualClock, SeededRandom, realEnv, type Env } from '../../../src/io/env.js';
import { decodeRecords } from '../../../src/protocol/records/records.js';
import type { MetadataImage } from '../../../src/metadata/image.js';
import { imageWith, MemoryLog, silent, topicIdFor } from '../../group/helpers.js';

export const TOPIC = 'orders';
export const TOPIC_ID = topicIdFor(TOPIC);

export interface ShareHarness {
  clock: ManualClock;
  log: MemoryLog;
  coordinator: ShareCoordinator;
  config: ShareCoordinatorConfig;
  setImage(image: MetadataImage): void;
  /** Stops this coordinator and loads a new one from the same log (a restart, or the state partition's new leader). */
  reload(): Promise<ShareCoordinator>;
}

export async function shareHarness(options: { config?: Partial<ShareCoordinatorConfig> } = {}): Promise<ShareHarness> {
  const clock = new ManualClock();
  const log = new MemoryLog();
  const config: ShareCoordinatorConfig = { ...DEFAULT_SHARE_COORDINATOR_CONFIG, stateTopicPartitions: 3, ...options.config };
  let image = imageWith([{ name: TOPIC, partitions: 4 }]);
  const env: Env = { ...realEnv, clock, timers: clock, random: new SeededRandom(7) };
  let epoch = 0;
  const build = async () => {
    const coordinator = new ShareCoordinator({ nodeId: 1, config, env, log, logger: silent, image: () => image });
    for (let p = 0; p < config.stateTopicPartitions; p++) coordinator.runtime.becomeLeader(p, epoch);
    epoch++;
    await coordinator.runtime.drain();
    return coordinator;
  };
  const h: ShareHarness = {
    clock,
    log,
    config,
    coordinator: await build(),
    setImage: (next) => {
      image = next;
    },
    reload: async () => {
      await h.coordinator.shutdown();
      h.coordinator = await build();
      return h.coordinator;
    },
  };
  return h;
}

/** Every share record written to the state partition, decoded. */
export function shareRecords(log: MemoryLog, partition: number): ShareCoordinatorRecord[] {
  const out: ShareCoordinatorRecord[] = [];
  for (const batch of log.batches.get(partition) ?? []) {
    const decoded = decodeRecords(batch);
    if (decoded.error !== null) throw new Error(decoded.error.message);
    for (const record of decoded.records) {
      const share = decodeShareRecord(record.key!, record.value);
      if (share !== null) out.push(share);
    }
  }
  return out;
}
