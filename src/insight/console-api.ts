/**
 * The console's JSON API (a contract: `spool doctor` reads it). Each node
 * answers with its own view; paths are percent-decoded segment by segment
 * (src/io/http.ts), so a topic or group name may hold any character.
 *
 *   GET  /api/overview
 *   GET  /api/topics
 *   GET  /api/topics/:topic
 *   GET  /api/topics/:topic/partitions/:p
 *   GET  /api/topics/:topic/partitions/:p/records?offset=N&limit=K | ?timestamp=T&limit=K
 *   GET  /api/groups
 *   GET  /api/groups/:group
 *   GET  /api/transactions
 *   POST /api/groups/:group/reset-offsets            {to: earliest|latest|offset, offset?, topic?}
 *   POST /api/topics/:topic/partitions/:p/delete-records?before=N
 *
 * Failures are `{error, message}` with an HTTP status (404 unknown topic,
 * partition or group; 400 a bad parameter; 403 an action while
 * console.actions.enable is false; 409 the action is refused; 405 a wrong
 * method). A POST must be `application/json` and, when the browser sends an
 * Origin, come from the console's own origin: a page elsewhere cannot post
 * a form to it (no CORS preflight would be needed for a form, so this is
 * the check that stops cross-site requests).
 */
import { jsonResponse, type HttpRequest, type HttpResponse } from '../io/http.js';
import { consoleFailure, groupDetail, groups, isFailure, overview, partitionDetail, topic, topics, transactions, type ConsoleFailure } from './snapshot.js';
import { browseRecords, RECORDS_LIMIT_DEFAULT, RECORDS_LIMIT_MAX, type BrowseRequest } from './record-browser.js';
import { deleteRecordsBefore, parseResetOffsetsRequest, resetGroupOffsets } from './console-actions.js';
import type { ConsoleSources } from './sources.js';

export const API_PREFIX = '/api/';

type Route = (sources: ConsoleSources, request: HttpRequest, params: readonly string[]) => unknown;

interface RouteDef {
  readonly method: 'GET' | 'POST';
  /**
   * Path segments after /api/; ':x' matches one segment, ':x*' one or more
   * joined by '/' (a group id may hold a '/', which the decoded path no
   * longer tells from a separator; Kafka's topic names cannot).
   */
  readonly pattern: readonly string[];
  readonly action?: boolean;
  readonly handle: Route;
}

const ROUTES: readonly RouteDef[] = [
  { method: 'GET', pattern: ['overview'], handle: (s) => overview(s) },
  { method: 'GET', pattern: ['topics'], handle: (s) => topics(s) },
  { method: 'GET', pattern: ['topics', ':topic'], handle: (s, _r, [name]) => topic(s, name!) },
  { method: 'GET', pattern: ['topics', ':topic', 'partitions', ':p'], handle: (s, _r, [name, p]) => withPartition(p!, (index) => partitionDetail(s, name!, index)) },
  { method: 'GET', pattern: ['topics', ':topic', 'partitions', ':p', 'records'], handle: (s, r, [name, p]) => withPartition(p!, (index) => records(s, r, name!, index)) },
  { method: 'GET', pattern: ['groups'], handle: (s) => groups(s) },
  { method: 'GET', pattern: ['groups', ':group*'], handle: (s, _r, [id]) => groupDetail(s, id!) },
  { method: 'GET', pattern: ['transactions'], handle: (s) => transactions(s) },
  { method: 'POST', pattern: ['groups', ':group*', 'reset-offsets'], action: true, handle: (s, r, [id]) => resetOffsets(s, r, id!) },
  { method: 'POST', pattern: ['topics', ':topic', 'partitions', ':p', 'delete-records'], action: true, handle: (s, r, [name, p]) => withPartition(p!, (index) => deleteRecords(s, r, name!, index)) },
];

/** Answers a request under /api/. */
export async function handleApi(sources: ConsoleSources, request: HttpRequest): Promise<HttpResponse> {
  const segments = request.path.slice(API_PREFIX.length).split('/');
  if (segments.at(-1) === '') segments.pop();
  const matching = ROUTES.map((route) => ({ route, params: match(route.pattern, segments) })).filter((m) => m.params !== null);
  if (matching.length === 0) return failureResponse(consoleFailure(404, 'NOT_FOUND', `no API at ${request.path}`));
  const found = matching.find((m) => m.route.method === request.method);
  if (found === undefined) return failureResponse(consoleFailure(405, 'METHOD_NOT_ALLOWED', `${request.method} is not served at ${request.path}`));
  if (found.route.action === true) {
    const refused = refuseAction(sources, request);
    if (refused !== null) return failureResponse(refused);
  }
  const result = await found.route.handle(sources, request, found.params!);
  return isFailure(result) ? failureResponse(result) : jsonResponse(result);
}

function match(pattern: readonly string[], segments: readonly string[]): string[] | null {
  const restLength = segments.length - pattern.length + 1;
  const hasRest = pattern.some((part) => part.endsWith('*'));
  if (hasRest ? restLength < 1 : pattern.length !== segments.length) return null;
  const params: string[] = [];
  let at = 0;
  for (const part of pattern) {
    const taken = part.endsWith('*') ? segments.slice(at, at + restLength) : [segments[at]!];
    at += taken.length;
    if (!part.startsWith(':')) {
      if (taken[0] !== part) return null;
      continue;
    }
    if (taken.every((segment) => segment === '')) return null;
    params.push(taken.join('/'));
  }
  return params;
}

function failureResponse(failure: ConsoleFailure): HttpResponse {
  return jsonResponse({ error: failure.error, message: failure.message }, failure.status);
}

function refuseAction(sources: ConsoleSources, request: HttpRequest): ConsoleFailure | null {
  if (!sources.actionsEnabled) return consoleFailure(403, 'ACTIONS_DISABLED', 'console actions are disabled: set console.actions.enable=true to allow them');
  const contentType = request.headers['content-type'] ?? '';
  if (!contentType.toLowerCase().startsWith('application/json')) return consoleFailure(415, 'UNSUPPORTED_MEDIA_TYPE', 'an action must be posted as application/json');
  const origin = request.headers.origin;
  const host = request.headers.host;
  if (origin !== undefined && (host === undefined || origin !== `http://${host}`)) return consoleFailure(403, 'CROSS_ORIGIN', `an action from origin ${origin} is refused`);
  return null;
}

// ---- parameters

/** A non-negative safe integer, or null. */
function nonNegativeInteger(text: string | null): number | null {
  if (text === null || !/^\d{1,16}$/.test(text)) return null;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : null;
}

function withPartition<T>(text: string, read: (partition: number) => T): T | ConsoleFailure {
  const partition = nonNegativeInteger(text);
  if (partition === null || partition > 0x7fff_ffff) return consoleFailure(400, 'INVALID_REQUEST', `bad partition ${text}`);
  return read(partition);
}

function records(sources: ConsoleSources, request: HttpRequest, topicName: string, partition: number) {
  const query = request.query;
  const limitText = query.get('limit');
  const limit = limitText === null ? RECORDS_LIMIT_DEFAULT : nonNegativeInteger(limitText);
  if (limit === null || limit < 1 || limit > RECORDS_LIMIT_MAX) return consoleFailure(400, 'INVALID_REQUEST', `limit must be an integer in [1, ${RECORDS_LIMIT_MAX}]`);
  const browse: BrowseRequest = { limit };
  if (query.has('timestamp')) {
    const timestamp = nonNegativeInteger(query.get('timestamp'));
    if (timestamp === null) return consoleFailure(400, 'INVALID_REQUEST', 'timestamp must be a non-negative integer (ms since the epoch)');
    browse.timestamp = timestamp;
  } else if (query.has('offset')) {
    const offset = nonNegativeInteger(query.get('offset'));
    if (offset === null) return consoleFailure(400, 'INVALID_REQUEST', 'offset must be a non-negative integer');
    browse.offset = offset;
  }
  return browseRecords(sources, topicName, partition, browse);
}

function resetOffsets(sources: ConsoleSources, request: HttpRequest, groupId: string) {
  let body: unknown;
  try {
    body = JSON.parse(request.body.toString('utf8'));
  } catch {
    return consoleFailure(400, 'INVALID_REQUEST', 'the body is not JSON');
  }
  const parsed = parseResetOffsetsRequest(body);
  return isFailure(parsed) ? parsed : resetGroupOffsets(sources, groupId, parsed);
}

function deleteRecords(sources: ConsoleSources, request: HttpRequest, topicName: string, partition: number) {
  const before = nonNegativeInteger(request.query.get('before'));
  if (before === null) return consoleFailure(400, 'INVALID_REQUEST', 'before must be a non-negative integer offset');
  return deleteRecordsBefore(sources, topicName, partition, before);
}
