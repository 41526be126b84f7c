/**
 * A Kafka error raised inside a coordinator operation.
 *
 * Operations validate in long chains (group exists, member known, epoch
 * current, ...), as Kafka's coordinator does with ApiExceptions; throwing
 * ends the chain at the first failure. A GroupApiError never leaves
 * src/group: the coordinator catches it at the operation boundary, writes no
 * records, and turns it into the error fields of the response. Anything else
 * thrown is a bug.
 */
import { errorInfo } from '../protocol/errors.js';

export class GroupApiError extends Error {
  override readonly name = 'GroupApiError';

  constructor(
    readonly errorCode: number,
    message?: string,
  ) {
    super(message ?? errorInfo(errorCode).message);
  }
}

export function isGroupApiError(error: unknown): error is GroupApiError {
  return error instanceof GroupApiError;
}
