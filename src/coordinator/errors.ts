/**
 * A Kafka error raised inside a coordinator operation (group or
 * transaction).
 *
 * Operations validate in long chains (group exists, member known, epoch
 * current, ...), as Kafka's coordinators do with ApiExceptions; throwing
 * ends the chain at the first failure. The runtime catches it at the
 * operation boundary, writes no records, and turns it into the error of the
 * outcome. Anything else thrown is a bug.
 */
import { errorInfo } from '../protocol/errors.js';

export class CoordinatorApiError extends Error {
  override readonly name: string = 'CoordinatorApiError';

  constructor(
    readonly errorCode: number,
    message?: string,
  ) {
    super(message ?? errorInfo(errorCode).message);
  }
}

export function isCoordinatorApiError(error: unknown): error is CoordinatorApiError {
  return error instanceof CoordinatorApiError;
}
