/**
 * ApiVersions (key 18), versions 0-5.
 *
 * Advertises exactly the handlers registered in apis/index.ts that the
 * request's listener serves (the controller listener's APIs or the
 * broker's), so the advertisement and what is served cannot drift, plus the supported and
 * finalized features (v3+, KIP-584; kraft.version from the Raft log, as
 * Kafka's KRaftMetadataCache reports it, once above 0). v3+ carries the client's software name
 * and version (KIP-511); a malformed name or version gets INVALID_REQUEST.
 * A request at a version above 5 is answered at v0 with UNSUPPORTED_VERSION
 * by the handler table, before this handler runs.
 * v5's ClusterId / NodeId check: a mismatch gets INCONSISTENT_CLUSTER_ID.
 */
import { ApiVersions } from '../../protocol/schemas/18-api-versions.js';
import { ErrorCode } from '../../protocol/errors.js';
import { SUPPORTED_FEATURES } from '../../metadata/features.js';
import { defineHandler } from '../handler.js';
import type { ControllerApiContext } from '../api-context.js';

/** Kafka's rule for client software names and versions. */
const SOFTWARE_TEXT = /^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$/;

export function apiVersionsHandler(broker: ControllerApiContext) {
  return defineHandler({
    api: ApiVersions,
    handle(request, context) {
      const apiKeys = broker.handlers.advertisedVersions(context.listenerName);
      if (context.apiVersion >= 3 && (!SOFTWARE_TEXT.test(request.clientSoftwareName) || !SOFTWARE_TEXT.test(request.clientSoftwareVersion))) {
        return { errorCode: ErrorCode.INVALID_REQUEST, apiKeys };
      }
      const image = broker.metadata.image;
      if (context.apiVersion >= 5 && request.clusterId !== null && request.clusterId !== image.clusterId) {
        return { errorCode: ErrorCode.INCONSISTENT_CLUSTER_ID, apiKeys };
      }
      return {
        errorCode: ErrorCode.NONE,
        apiKeys,
        throttleTimeMs: 0,
        supportedFeatures: SUPPORTED_FEATURES.map((f) => ({ name: f.name, minVersion: f.minVersion, maxVersion: f.maxVersion })),
        finalizedFeaturesEpoch: image.offset,
        finalizedFeatures: finalizedFeatures(image.features, broker.raft.kraftVersion),
      };
    },
    errorResponse: (_request, errorCode) => ({ errorCode }),
  });
}

/** The metadata image's finalized levels, and kraft.version from the Raft log once above 0 (Kafka's KRaftMetadataCache.features). */
function finalizedFeatures(levels: ReadonlyMap<string, number>, kraftVersion: number) {
  const finalized = new Map(levels);
  if (kraftVersion > 0) finalized.set('kraft.version', kraftVersion);
  return [...finalized].map(([name, level]) => ({ name, maxVersionLevel: level, minVersionLevel: level }));
}
