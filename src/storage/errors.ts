/**
 * Errors the storage layer raises. Each Kafka-facing error carries the Kafka
 * error code the broker puts in its response (STYLE.md point 3: the handler
 * maps, storage never builds responses). Broken invariants of the files
 * themselves are CorruptIndexError / CorruptRecordsError: recovery catches
 * them and rebuilds; elsewhere they are bugs.
 */
import { ErrorCode } from '../protocol/errors.js';

/** Base of the errors that map to a Kafka error code. */
export class StorageKafkaError extends Error {
  constructor(
    readonly errorCode: number,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * A disk error (ENOSPC, EIO, ...) hit this log: it is offline from now on
 * and every call fails with this error (Kafka's KafkaStorageException ->
 * KAFKA_STORAGE_ERROR). The files stay a valid prefix of what was appended.
 */
export class KafkaStorageError extends StorageKafkaError {
  override readonly name = 'KafkaStorageError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.KAFKA_STORAGE_ERROR, message, options);
  }
}

/** A read or truncation asked for an offset outside [logStartOffset, logEndOffset]. */
export class OffsetOutOfRangeError extends StorageKafkaError {
  override readonly name = 'OffsetOutOfRangeError';
  constructor(message: string) {
    super(ErrorCode.OFFSET_OUT_OF_RANGE, message);
  }
}

/** An appended batch failed validation (bad CRC, size, magic, ...). */
export class InvalidRecordError extends StorageKafkaError {
  override readonly name = 'InvalidRecordError';
}

/** A batch set larger than segment.bytes can never be appended. */
export class RecordBatchTooLargeError extends StorageKafkaError {
  override readonly name = 'RecordBatchTooLargeError';
  constructor(message: string) {
    super(ErrorCode.RECORD_LIST_TOO_LARGE, message);
  }
}

/** A follower append whose first offset is below the log end offset (Kafka's UnexpectedAppendOffsetException). */
export class UnexpectedAppendOffsetError extends StorageKafkaError {
  override readonly name = 'UnexpectedAppendOffsetError';
  constructor(
    message: string,
    readonly firstOffset: number,
    readonly lastOffset: number,
  ) {
    super(ErrorCode.UNKNOWN_SERVER_ERROR, message);
  }
}

/** An index file that cannot be trusted; its segment's indexes are rebuilt from the log. */
export class CorruptIndexError extends Error {
  override readonly name = 'CorruptIndexError';
}

/** An entry appended to an index out of order: a bug in the caller. */
export class InvalidOffsetError extends Error {
  override readonly name = 'InvalidOffsetError';
}

/** True for errors thrown by the file system (errno-style), as opposed to bugs. */
export function isIoError(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && typeof (error as NodeJS.ErrnoException).code === 'string';
}

/** A batch larger than max.message.bytes (Kafka's RecordTooLargeException -> MESSAGE_TOO_LARGE). */
export class RecordTooLargeError extends StorageKafkaError {
  override readonly name = 'RecordTooLargeError';
  constructor(message: string) {
    super(ErrorCode.MESSAGE_TOO_LARGE, message);
  }
}
