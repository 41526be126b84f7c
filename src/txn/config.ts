/**
 * The transaction coordinator's settings, under Kafka's broker config
 * names, with Kafka 4.x defaults.
 */
import type { ConfigSource } from '../group/config.js';

export interface TransactionCoordinatorConfig {
  /** transaction.state.log.num.partitions */
  transactionLogPartitions: number;
  /** transaction.max.timeout.ms: the largest transaction.timeout.ms a producer may ask for */
  transactionMaxTimeoutMs: number;
  /** transactional.id.expiration.ms: an id idle this long (no transaction open) is forgotten */
  transactionalIdExpirationMs: number;
  /** transaction.abort.timed.out.transaction.cleanup.interval.ms */
  abortTimedOutTransactionsIntervalMs: number;
  /** transaction.remove.expired.transaction.cleanup.interval.ms */
  removeExpiredTransactionalIdsIntervalMs: number;
  /** request.timeout.ms: how long a write to __transaction_state may take (Kafka's TransactionConfig.requestTimeoutMs) */
  requestTimeoutMs: number;
}

export const DEFAULT_TRANSACTION_COORDINATOR_CONFIG: TransactionCoordinatorConfig = {
  transactionLogPartitions: 50,
  transactionMaxTimeoutMs: 900_000,
  transactionalIdExpirationMs: 604_800_000,
  abortTimedOutTransactionsIntervalMs: 10_000,
  removeExpiredTransactionalIdsIntervalMs: 3_600_000,
  requestTimeoutMs: 30_000,
};

export function transactionCoordinatorConfigFrom(source: ConfigSource): TransactionCoordinatorConfig {
  const d = DEFAULT_TRANSACTION_COORDINATOR_CONFIG;
  const int = (name: string, fallback: number) => source.optionalInt(name) ?? fallback;
  return {
    transactionLogPartitions: int('transaction.state.log.num.partitions', d.transactionLogPartitions),
    transactionMaxTimeoutMs: int('transaction.max.timeout.ms', d.transactionMaxTimeoutMs),
    transactionalIdExpirationMs: int('transactional.id.expiration.ms', d.transactionalIdExpirationMs),
    abortTimedOutTransactionsIntervalMs: int('transaction.abort.timed.out.transaction.cleanup.interval.ms', d.abortTimedOutTransactionsIntervalMs),
    removeExpiredTransactionalIdsIntervalMs: int('transaction.remove.expired.transaction.cleanup.interval.ms', d.removeExpiredTransactionalIdsIntervalMs),
    requestTimeoutMs: int('request.timeout.ms', d.requestTimeoutMs),
  };
}
