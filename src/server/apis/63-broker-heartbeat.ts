/**
 * BrokerHeartbeat (key 63), versions 0-2, on the controller listener: a
 * registered broker renews its session and asks to be unfenced once it has
 * caught up with the metadata log (KIP-631).
 *
 * v1 carries offline log directories (KIP-858), v2 cordoned ones (KIP-1066).
 *
 * Not done (yet): sessions (broker.session.timeout.ms fencing), caught-up
 * tracking by metadata offset (every registered broker is caught up),
 * wantShutDown (controlled shutdown) and offline log directories.
 */
import { BrokerHeartbeat } from '../../protocol/schemas/63-broker-heartbeat.js';
import { ErrorCode } from '../../protocol/errors.js';
import { NotControllerError } from '../../controller/quorum-controller.js';
import { defineHandler } from '../handler.js';
import type { ControllerApiContext } from '../api-context.js';

export function brokerHeartbeatHandler(node: ControllerApiContext) {
  const answer = (errorCode: number, isFenced: boolean) => ({ throttleTimeMs: 0, errorCode, isCaughtUp: errorCode === ErrorCode.NONE, isFenced, shouldShutDown: false });
  return defineHandler({
    api: BrokerHeartbeat,
    async handle(request) {
      try {
        if (!request.wantFence) {
          const unfenced = await node.controller.unfenceBroker(request.brokerId, request.brokerEpoch);
          if (unfenced.errorCode !== ErrorCode.NONE) return answer(unfenced.errorCode, true);
        }
        return answer(ErrorCode.NONE, node.metadata.image.brokers.get(request.brokerId)?.fenced ?? true);
      } catch (error) {
        if (error instanceof NotControllerError) return answer(ErrorCode.NOT_CONTROLLER, true);
        throw error;
      }
    },
    errorResponse: (_request, errorCode) => answer(errorCode, true),
  });
}
