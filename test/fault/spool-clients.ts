/**
 * A workload of Spool's own client (src/client): producers, idempotent with
 * acks=all, each sending unique values ("spool-P.N") with a bounded number in
 * flight; consumers each assigned every partition (no group), reading from
 * the earliest offset. With manual assignment a consumer never rebalances,
 * so the checker holds it to the strict rules: every partition read in
 * order, without a skip, start to end.
 *
 * A send that fails is of unknown outcome (it may have been written before
 * the error); the checker does not expect it but counts it if read.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import type { HistoryEvent } from './history-checker.js';
import { acknowledgedIn, type Workload } from './workload.js';

/** Sends a producer keeps in flight at most. */
const IN_FLIGHT_MAX = 20;
/** The pause between two sends of one producer: about 200 a second each, leaving the two cores to the nodes. */
const SEND_PACE_MS = 5;

export interface SpoolWorkloadOptions {
  bootstrapServers: string;
  topic: string;
  partitions: number;
  producers: number;
  consumers: number;
}

export function startSpoolWorkload(options: SpoolWorkloadOptions): Workload {
  const history: HistoryEvent[] = [];
  let producing = true;
  let consuming = true;
  const producerLoops = Array.from({ length: options.producers }, (_, index) => produce(`spool-${index + 1}`));
  const consumerLoops = Array.from({ length: options.consumers }, (_, index) => consume(`consumer-${index + 1}`));

  async function produce(process: string): Promise<void> {
    const producer = new Producer({ bootstrapServers: options.bootstrapServers, acks: -1, idempotence: true, lingerMs: 5, requestTimeoutMs: 5000, retryBackoffMs: 100 });
    const inFlight = new Set<Promise<void>>();
    try {
      for (let n = 0; producing; n++) {
        const value = `${process}.${n}`;
        const sent: Promise<void> = producer.send({ topic: options.topic, value }).then(
          (metadata) => { history.push({ type: 'send', process, value, outcome: 'ok', topic: metadata.topic, partition: metadata.partition, offset: metadata.offset }); },
          (error: unknown) => { history.push({ type: 'send', process, value, outcome: 'info', error: String(error) }); },
        ).finally(() => inFlight.delete(sent));
        inFlight.add(sent);
        if (inFlight.size >= IN_FLIGHT_MAX) await Promise.race(inFlight);
        await sleep(SEND_PACE_MS);
      }
      await Promise.all(inFlight);
    } finally {
      await producer.close();
    }
  }

  async function consume(process: string): Promise<void> {
    const consumer = new Consumer({ bootstrapServers: options.bootstrapServers, autoOffsetReset: 'earliest', fetchMaxWaitMs: 200, requestTimeoutMs: 5000, retryBackoffMs: 100 });
    try {
      consumer.assign(Array.from({ length: options.partitions }, (_, partition) => ({ topic: options.topic, partition })));
      history.push({ type: 'assign', process });
      while (consuming) {
        // A poll failing under a fault (a request timed out at an isolated leader) is retried: the checker judges what was read.
        const records = await consumer.poll(500).catch(async () => { await sleep(100); return []; });
        if (records.length === 0) continue;
        history.push({
          type: 'poll',
          process,
          records: records.map((record) => ({ topic: record.topic, partition: record.partition, offset: record.offset, value: record.value?.toString() ?? '' })),
        });
      }
    } finally {
      await consumer.close();
    }
  }

  return {
    history,
    acknowledged: () => acknowledgedIn(history),
    stopProducers: async () => {
      producing = false;
      await Promise.all(producerLoops);
    },
    stopConsumers: async () => {
      consuming = false;
      await Promise.all(consumerLoops);
    },
  };
}
