/**
 * A Kafka error raised inside a group coordinator operation (see
 * coordinator/errors.ts). A GroupApiError never leaves src/group: the
 * runtime turns it into the error fields of the response.
 */
import { CoordinatorApiError } from '../coordinator/errors.js';

export class GroupApiError extends CoordinatorApiError {
  override readonly name = 'GroupApiError';
}

