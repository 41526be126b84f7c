/**
 * DescribeCluster (key 60), versions 0-2 (KIP-700).
 *
 * v1 endpointType: 1 brokers, 2 controllers (KIP-919); v2
 * includeFencedBrokers and isFenced (KIP-1073).
 *
 * On a broker listener: the live brokers (fenced ones too when asked) with
 * that listener's advertised endpoints, and a live broker as controllerId.
 * On a controller listener: the registered controllers and the active
 * controller (the Raft leader, -1 while none is known), as Kafka's
 * ControllerApis. Asking a listener for the other kind of endpoint gives
 * MISMATCHED_ENDPOINT_TYPE (INVALID_REQUEST at v0, which has no endpoint
 * type: a v0 request always wants brokers), and an endpoint type that is
 * neither UNSUPPORTED_ENDPOINT_TYPE, as Kafka's brokers and controllers
 * answer.
 * clusterAuthorizedOperations holds every cluster operation when asked for
 * (those the client has, 0 without DESCRIBE on the cluster), -2147483648 otherwise.
 */
import { DescribeCluster } from '../../protocol/schemas/60-describe-cluster.js';
import { ErrorCode } from '../../protocol/errors.js';
import {
  AUTHORIZED_OPERATIONS_OMITTED,
  aliveBrokerId,
  brokersOnListener,
  controllersOnListener,
} from '../../metadata/cluster-view.js';
import { defineHandler } from '../handler.js';
import { CLUSTER_NAME } from '../../security/authorizer/acl.js';
import type { RequestContext } from '../handler.js';
import { AclOperation, ResourceType, authorizeCluster, authorizedOperations, type Authorizing } from '../authorization.js';
import type { ControllerApiContext } from '../api-context.js';

const BROKER_ENDPOINTS = 1;
const CONTROLLER_ENDPOINTS = 2;

/** Kafka's: the cluster's authorized operations need DESCRIBE there; without it they are 0. */
function clusterOperations(node: Authorizing, context: RequestContext): number {
  return authorizeCluster(node, context, AclOperation.DESCRIBE) ? authorizedOperations(node, context, ResourceType.CLUSTER, CLUSTER_NAME) : 0;
}

export function describeClusterHandler(broker: ControllerApiContext) {
  return defineHandler({
    api: DescribeCluster,
    async handle(request, context) {
      const onControllerListener = broker.handlers.roleOf(context.listenerName) === 'controller';
      // A controller answers from the log replayed so far (Kafka's registrations publisher): brokers find the active controller by it while they start.
      if (!onControllerListener) await broker.metadata.whenReady();
      const image = broker.metadata.image;
      const listenerType = onControllerListener ? CONTROLLER_ENDPOINTS : BROKER_ENDPOINTS;
      const endpointType = context.apiVersion >= 1 ? request.endpointType : BROKER_ENDPOINTS;
      const refused = endpointTypeError(endpointType, listenerType, context.apiVersion);
      if (refused !== null) return { ...refused, clusterId: '', brokers: [] };
      const base = {
        throttleTimeMs: 0,
        endpointType,
        clusterId: image.clusterId,
        clusterAuthorizedOperations: request.includeClusterAuthorizedOperations ? clusterOperations(broker, context) : AUTHORIZED_OPERATIONS_OMITTED,
      };
      const nodes = onControllerListener
        ? controllersOnListener(image, context.listenerName)
        : brokersOnListener(image, context.listenerName, { includeFenced: context.apiVersion >= 2 && request.includeFencedBrokers });
      return {
        ...base,
        errorCode: ErrorCode.NONE,
        errorMessage: null,
        controllerId: onControllerListener ? (broker.raft.leaderAndEpoch.leaderId ?? -1) : aliveBrokerId(image, broker.nodeId),
        brokers: nodes.map((n) => ({ brokerId: n.nodeId, host: n.host, port: n.port, rack: n.rack, isFenced: n.fenced })),
      };
    },
    errorResponse: (_request, errorCode) => ({ errorCode, errorMessage: null, clusterId: '', brokers: [] }),
  });
}

const ENDPOINT_TYPE_NAMES = new Map([[BROKER_ENDPOINTS, 'BROKER'], [CONTROLLER_ENDPOINTS, 'CONTROLLER']]);

/** Kafka's answer when the request's endpoint type is not the listener's; null when it is. */
function endpointTypeError(endpointType: number, listenerType: number, version: number): { errorCode: number; errorMessage: string } | null {
  const wanted = ENDPOINT_TYPE_NAMES.get(endpointType);
  if (wanted === undefined) {
    return { errorCode: version === 0 ? ErrorCode.INVALID_REQUEST : ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, errorMessage: `Unsupported endpoint type ${endpointType}` };
  }
  if (endpointType === listenerType) return null;
  return {
    errorCode: version === 0 ? ErrorCode.INVALID_REQUEST : ErrorCode.MISMATCHED_ENDPOINT_TYPE,
    errorMessage: `The request was sent to an endpoint of type ${ENDPOINT_TYPE_NAMES.get(listenerType)}, but we wanted an endpoint of type ${wanted}`,
  };
}
