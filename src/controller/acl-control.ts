/**
 * CreateAcls and DeleteAcls on the controller, as Kafka's AclControlManager:
 * - a new ACL is validated (INVALID_REQUEST with Kafka's message: a CLUSTER
 *   resource other than kafka-cluster, an empty name, resource type ANY,
 *   pattern type other than LITERAL or PREFIXED, operation ANY, permission
 *   other than ALLOW or DENY); an ACL already stored, or created earlier in
 *   the same request, succeeds without a second record;
 * - each stored ACL is an AccessControlEntryRecord with a fresh random id;
 * - a delete filter removes every stored ACL it matches
 *   (RemoveAccessControlEntryRecord by id) and reports them; all filters'
 *   records are written atomically, at most MAX_RECORDS_PER_USER_OP.
 */
import { ErrorCode } from '../protocol/errors.js';
import { metadataRecord, type MetadataRecord } from '../metadata/records.js';
import { aclKey, filterMatches, invalidNewAcl, type AclBindingFilter, type StandardAcl } from '../security/authorizer/acl.js';
import type { ControllerContext } from './context.js';
import { EXCESSIVE_BATCH_MESSAGE, MAX_RECORDS_PER_USER_OP, type ApiError, type ControllerResult } from './result.js';

export interface DeleteAclsFilterResult extends ApiError {
  matchingAcls: StandardAcl[];
}

export function createAcls(context: ControllerContext, acls: readonly StandardAcl[]): ControllerResult<ApiError[]> {
  const existing = new Set([...context.image.acls.values()].map(aclKey));
  const usedIds = new Set(context.image.acls.keys());
  const records: MetadataRecord[] = [];
  const response: ApiError[] = [];
  for (const acl of acls) {
    const invalid = invalidNewAcl(acl);
    if (invalid !== null) {
      response.push({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: invalid });
      continue;
    }
    const key = aclKey(acl);
    if (!existing.has(key)) {
      existing.add(key);
      const id = newAclId(context, usedIds);
      records.push(metadataRecord('AccessControlEntryRecord', { id, ...acl }));
    }
    response.push({ errorCode: ErrorCode.NONE, errorMessage: null });
  }
  return { records, response };
}

export function deleteAcls(context: ControllerContext, filters: readonly AclBindingFilter[]): ControllerResult<DeleteAclsFilterResult[]> {
  const removed = new Set<string>();
  const response: DeleteAclsFilterResult[] = [];
  for (const filter of filters) {
    const matchingAcls: StandardAcl[] = [];
    for (const [id, acl] of context.image.acls) {
      if (!filterMatches(filter, acl)) continue;
      matchingAcls.push(acl);
      removed.add(id);
    }
    response.push({ errorCode: ErrorCode.NONE, errorMessage: null, matchingAcls });
  }
  if (removed.size > MAX_RECORDS_PER_USER_OP) {
    const failed = filters.map(() => ({ errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: EXCESSIVE_BATCH_MESSAGE, matchingAcls: [] }));
    return { records: [], response: failed };
  }
  return { records: [...removed].map((id) => metadataRecord('RemoveAccessControlEntryRecord', { id })), response };
}

/** A random id no ACL has (Kafka's AclControlManager.newAclId). */
function newAclId(context: ControllerContext, usedIds: Set<string>): string {
  for (;;) {
    const id = context.random.uuid().toString('base64url');
    if (usedIds.has(id)) continue;
    usedIds.add(id);
    return id;
  }
}
