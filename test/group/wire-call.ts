/**
 * One request and its response over a raw connection, for the group tests
 * that speak the wire protocol to a real broker (Spool or, through
 * SPOOL_E2E_BOOTSTRAP, Kafka 4.4).
 */
import assert from 'node:assert/strict';
import { decodeResponse, encodeRequest } from '../../src/protocol/apis.js';
import type { ApiDef, Partial, RequestOf, ResponseOf } from '../../src/protocol/schema.js';
import type { WireClient } from '../server/wire-client.js';

let correlationId = 0;

export async function wireCall<A extends ApiDef>(client: WireClient, api: A, version: number, body: Partial<RequestOf<A>>): Promise<ResponseOf<A>> {
  client.send(encodeRequest(api, { apiVersion: version, correlationId: ++correlationId, clientId: 'group-tests' }, body));
  const frame = await client.next();
  assert.ok(frame !== null, `${api.name} v${version}: connection closed`);
  const decoded = decodeResponse(api, version, frame);
  assert.ok(decoded.ok, `${api.name} v${version}: response did not decode`);
  return decoded.body;
}
