/**
 * One request over a WireClient, answered and decoded: the building block of
 * tests that speak the wire protocol to Spool or, through
 * SPOOL_E2E_BOOTSTRAP, to a real Kafka.
 */
import assert from 'node:assert/strict';
import { decodeResponse, encodeRequest } from '../../src/protocol/apis.js';
import type { ApiDef, Partial, RequestOf, ResponseOf } from '../../src/protocol/schema.js';
import type { WireClient } from './wire-client.js';

let correlationId = 0;

/** Sends one request and resolves with its decoded response, or null when the broker closed the connection instead. */
export async function callOrClosed<A extends ApiDef>(client: WireClient, api: A, version: number, body: Partial<RequestOf<A>>): Promise<ResponseOf<A> | null> {
  const id = ++correlationId;
  client.send(encodeRequest(api, { apiVersion: version, correlationId: id, clientId: 'spool-wire-test' }, body));
  const frame = await client.next();
  if (frame === null) return null;
  const decoded = decodeResponse(api, version, frame);
  assert.ok(decoded.ok, `${api.name} v${version}: ${decoded.ok ? '' : decoded.error.message}`);
  assert.equal(decoded.correlationId, id);
  return decoded.body;
}

/** Sends one request and resolves with its decoded response; fails the test if the connection closes. */
export async function call<A extends ApiDef>(client: WireClient, api: A, version: number, body: Partial<RequestOf<A>>): Promise<ResponseOf<A>> {
  const response = await callOrClosed(client, api, version, body);
  assert.ok(response !== null, `${api.name} v${version}: connection closed`);
  return response;
}
