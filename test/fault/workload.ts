/**
 * What the fault runner needs from a workload of producers and consumers
 * (Kafka's VerifiableProducer/VerifiableConsumer, or Spool's own client):
 * its history so far, how many sends were acknowledged (to wait for
 * progress), and a way to stop producing, then to stop consuming once every
 * partition was read to its end.
 */
import type { HistoryEvent } from './history-checker.js';

export interface Workload {
  /** Every event so far, in the order the test observed them. */
  readonly history: readonly HistoryEvent[];
  /** Acknowledged sends so far. */
  acknowledged(): number;
  /** Stops the producers; resolves when every send has an outcome. */
  stopProducers(): Promise<void>;
  /** Stops the consumers. */
  stopConsumers(): Promise<void>;
}

/** partition → the highest offset any consumer polled, from a history. */
export function highestPolled(history: readonly HistoryEvent[], topic: string): Map<number, number> {
  const highest = new Map<number, number>();
  for (const event of history) {
    if (event.type !== 'poll') continue;
    for (const record of event.records) {
      if (record.topic === topic && record.offset > (highest.get(record.partition) ?? -1)) highest.set(record.partition, record.offset);
    }
  }
  return highest;
}

export function acknowledgedIn(history: readonly HistoryEvent[]): number {
  let count = 0;
  for (const event of history) if (event.type === 'send' && event.outcome === 'ok') count++;
  return count;
}
