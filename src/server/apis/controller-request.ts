/**
 * What the controller's APIs share: the call on the QuorumController, and
 * NOT_CONTROLLER (Kafka's NotControllerException) when this node's
 * controller is not the active one, so the sender looks for the one that is.
 */
import { NotControllerError } from '../../controller/quorum-controller.js';
import { ErrorCode } from '../../protocol/errors.js';

/** The controller's answer, or `refused(NOT_CONTROLLER)` while this controller is not active. */
export async function onActiveController<T>(call: () => Promise<T>, refused: (errorCode: number) => T): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof NotControllerError) return refused(ErrorCode.NOT_CONTROLLER);
    throw error;
  }
}
