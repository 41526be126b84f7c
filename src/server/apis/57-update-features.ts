/**
 * UpdateFeatures (key 57), versions 0-2 (KIP-584; v1 adds upgradeType and
 * validateOnly, KIP-778; v2 drops the per-feature results), on both roles'
 * listeners: a broker forwards it to the active controller
 * (src/node/forwarding.ts), which checks and writes the FeatureLevelRecords
 * (src/controller/feature-control.ts). The first feature that fails fails
 * them all: the top-level error carries Kafka's "The update failed for all
 * features ..." message and v0-1 list no results; on success v0-1 list
 * each feature with NONE. The answer comes once the records are in this
 * node's image, so ApiVersions and DescribeFeatures that follow see them.
 *
 * As Kafka's QuorumController, the upgradeType field is read at every
 * version (v0's allowDowngrade is not consulted, so a v0 downgrade is
 * refused as an UPGRADE would be).
 *
 * Authorization: ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED, no
 * results), as Kafka's ControllerApis.
 */
import { UpdateFeatures } from '../../protocol/schemas/57-update-features.js';
import { ErrorCode, errorInfo } from '../../protocol/errors.js';
import { NotControllerError } from '../../controller/quorum-controller.js';
import { defineHandler } from '../handler.js';
import { AclOperation, authorizeCluster } from '../authorization.js';
import type { ControllerApiContext } from '../api-context.js';

/** Kafka's UpdateFeaturesResponse.createWithErrors with no per-feature errors: the request's error, its default message. */
function failed(errorCode: number, errorMessage: string | null = errorInfo(errorCode).message) {
  return { throttleTimeMs: 0, errorCode, errorMessage, results: [] };
}

export function updateFeaturesHandler(node: ControllerApiContext) {
  return defineHandler({
    api: UpdateFeatures,
    async handle(request, context) {
      if (!authorizeCluster(node, context, AclOperation.ALTER)) return failed(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
      let outcome;
      try {
        outcome = await node.controller.updateFeatures(request.featureUpdates, { validateOnly: request.validateOnly });
      } catch (error) {
        if (!(error instanceof NotControllerError)) throw error;
        return failed(ErrorCode.NOT_CONTROLLER);
      }
      if (outcome.errorCode !== ErrorCode.NONE) {
        return failed(outcome.errorCode, `The update failed for all features since the following feature had an error: ${outcome.errorMessage}`);
      }
      const results = context.apiVersion <= 1 ? request.featureUpdates.map(({ feature }) => ({ feature, errorCode: ErrorCode.NONE, errorMessage: null })) : [];
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, results };
    },
    errorResponse: (_request, errorCode) => failed(errorCode),
  });
}
