/**
 * The errors Spool's client raises. A Kafka error code from a response
 * becomes a KafkaError carrying Kafka's name and retriable flag (from the
 * one error table, src/protocol/errors.ts); transport failures are
 * NetworkErrors (retriable, like Kafka's NETWORK_EXCEPTION); deadlines are
 * TimeoutErrors.
 */
import { ErrorCode, errorInfo, type ErrorName } from '../protocol/errors.js';

export class KafkaError extends Error {
  override readonly name: string = 'KafkaError';
  readonly code: number;
  readonly errorName: ErrorName;
  readonly retriable: boolean;
  /** The broker's error message, else Kafka's description of the code. */
  readonly detail: string;

  constructor(code: number, detail?: string | null) {
    const info = errorInfo(code);
    super(detail ? `${info.name}: ${detail}` : `${info.name}: ${info.message}`);
    this.detail = detail || info.message;
    this.code = code;
    this.errorName = info.name;
    this.retriable = info.retriable;
  }
}

/** The connection failed or closed before a response arrived. */
export class NetworkError extends KafkaError {
  override readonly name = 'NetworkError';

  constructor(detail: string) {
    super(ErrorCode.NETWORK_EXCEPTION, detail);
  }
}

/** A request or operation ran past its deadline. */
export class TimeoutError extends KafkaError {
  override readonly name = 'TimeoutError';

  constructor(detail: string) {
    super(ErrorCode.REQUEST_TIMED_OUT, detail);
  }
}

/** A transactional record dropped unsent because its transaction was aborted (Kafka's TransactionAbortedException). */
export class TransactionAbortedError extends Error {
  override readonly name = 'TransactionAbortedError';

  constructor() {
    super('Failing batch since transaction was aborted');
  }
}

/** Errors that mean "the metadata we hold is stale": refresh it before retrying. */
const STALE_METADATA = new Set<number>([
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.LEADER_NOT_AVAILABLE,
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.REPLICA_NOT_AVAILABLE,
  ErrorCode.FENCED_LEADER_EPOCH,
  ErrorCode.UNKNOWN_LEADER_EPOCH,
  ErrorCode.NOT_CONTROLLER,
  ErrorCode.UNKNOWN_TOPIC_ID,
  ErrorCode.INCONSISTENT_TOPIC_ID,
  ErrorCode.NETWORK_EXCEPTION,
  ErrorCode.BROKER_NOT_AVAILABLE,
]);

export function needsMetadataRefresh(code: number): boolean {
  return STALE_METADATA.has(code);
}

export function isRetriableError(error: unknown): boolean {
  return error instanceof KafkaError && error.retriable;
}

/** Throws a KafkaError for a non-zero code. */
export function throwIfError(code: number, detail?: string | null): void {
  if (code !== ErrorCode.NONE) throw new KafkaError(code, detail);
}
