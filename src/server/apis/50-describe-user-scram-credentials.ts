/**
 * DescribeUserScramCredentials (key 50), version 0 (KIP-554), on both
 * roles' listeners, from the metadata image as Kafka's ScramImage.describe:
 * no users (null or empty) means every user with a credential; a user named
 * twice gets DUPLICATE_RESOURCE, one without credentials RESOURCE_NOT_FOUND,
 * each with Kafka's message. Only mechanisms and iteration counts leave the
 * broker, never salts or keys.
 *
 * Authorization: DESCRIBE on the cluster (CLUSTER_AUTHORIZATION_FAILED).
 */
import { DescribeUserScramCredentials } from '../../protocol/schemas/50-describe-user-scram-credentials.js';
import { ErrorCode } from '../../protocol/errors.js';
import type { MetadataImage } from '../../metadata/image.js';
import { defineHandler } from '../handler.js';
import { AclOperation, authorizeCluster } from '../authorization.js';
import type { ControllerApiContext } from '../api-context.js';

export function describeUserScramCredentialsHandler(node: ControllerApiContext) {
  return defineHandler({
    api: DescribeUserScramCredentials,
    async handle(request, context) {
      // DESCRIBE on the cluster, as Kafka's.
      if (!authorizeCluster(node, context, AclOperation.DESCRIBE)) return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: null, results: [] };
      await node.metadata.whenReady();
      const image = node.metadata.image;
      const requested = request.users ?? [];
      const names = requested.length === 0 ? [...image.scramCredentials.keys()] : requested.map((user) => user.name);
      const counts = new Map<string, number>();
      for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1);
      const results = [...counts].sort(([a], [b]) => a.localeCompare(b)).map(([user, count]) => describeUser(image, user, count > 1));
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, results };
    },
    errorResponse: (_request, errorCode) => ({ throttleTimeMs: 0, errorCode, errorMessage: null, results: [] }),
  });
}

function describeUser(image: MetadataImage, user: string, duplicated: boolean) {
  if (duplicated) {
    return { user, errorCode: ErrorCode.DUPLICATE_RESOURCE, errorMessage: `Cannot describe SCRAM credentials for the same user twice in a single request: ${user}`, credentialInfos: [] };
  }
  const credentials = image.scramCredentials.get(user);
  if (credentials === undefined) {
    return { user, errorCode: ErrorCode.RESOURCE_NOT_FOUND, errorMessage: `Attempt to describe a user credential that does not exist: ${user}`, credentialInfos: [] };
  }
  const credentialInfos = [...credentials].sort(([a], [b]) => a - b).map(([mechanism, credential]) => ({ mechanism, iterations: credential.iterations }));
  return { user, errorCode: ErrorCode.NONE, errorMessage: null, credentialInfos };
}
