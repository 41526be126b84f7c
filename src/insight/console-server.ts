/**
 * The web console's listener (`console.listener`, off by default): the page
 * at /, its script and style under /static/, and the JSON API under /api/
 * (console-api.ts). The page, script and style are TS string modules, so
 * they ship inside dist/ with no build step and no file lookup at run time.
 *
 * Responses carry a Content-Security-Policy that allows only this origin's
 * script and style, and nosniff, so data shown by the page can never run
 * as script even if an escaping bug slipped in.
 */
import { parseHttpListener, textResponse, type HttpListener, type HttpNetwork, type HttpRequest, type HttpResponse } from '../io/http.js';
import type { BrokerConfig } from '../common/config.js';
import { API_PREFIX, handleApi } from './console-api.js';
import type { ConsoleSources } from './sources.js';
import type { SpoolNode } from '../node/node.js';
import { INDEX_HTML } from './console/static/index-html.js';
import { APP_JS } from './console/static/app-js.js';
import { STYLE_CSS } from './console/static/style-css.js';

export const CONSOLE_LISTENER_CONFIG = 'console.listener';
export const CONSOLE_ACTIONS_ENABLE_CONFIG = 'console.actions.enable';

const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
} as const;

const STATIC: ReadonlyMap<string, { contentType: string; body: string }> = new Map([
  ['/', { contentType: 'text/html; charset=utf-8', body: INDEX_HTML }],
  ['/index.html', { contentType: 'text/html; charset=utf-8', body: INDEX_HTML }],
  ['/static/app.js', { contentType: 'text/javascript; charset=utf-8', body: APP_JS }],
  ['/static/style.css', { contentType: 'text/css; charset=utf-8', body: STYLE_CSS }],
]);

/** The console's HTTP handler over `sources`. */
export function consoleHandler(sources: ConsoleSources): (request: HttpRequest) => Promise<HttpResponse> {
  return async (request) => {
    const response = await route(sources, request);
    return { ...response, headers: { ...SECURITY_HEADERS, ...response.headers } };
  };
}

async function route(sources: ConsoleSources, request: HttpRequest): Promise<HttpResponse> {
  if (request.path.startsWith(API_PREFIX)) return handleApi(sources, request);
  const file = STATIC.get(request.path);
  if (file === undefined) return textResponse(404, `not found: ${request.path}\n`);
  if (request.method !== 'GET' && request.method !== 'HEAD') return textResponse(405, `${request.method} is not served at ${request.path}\n`);
  return { status: 200, ...file };
}

/** Binds console.listener through `http` (asked for only then) when it is set; null when the console is off. */
export async function startConsole(config: BrokerConfig, sources: ConsoleSources, http: () => HttpNetwork): Promise<HttpListener | null> {
  const value = config.string(CONSOLE_LISTENER_CONFIG);
  if (value === null || value === '') return null;
  return http().listen(parseHttpListener(CONSOLE_LISTENER_CONFIG, value), consoleHandler(sources));
}

/** A started node's rooms, as the console reads them. */
export function nodeConsoleSources(node: SpoolNode): ConsoleSources {
  const broker = node.brokerServer;
  const raft = node.shared.raft;
  return {
    nodeId: node.nodeId,
    roles: [...node.roles],
    metadata: node.metadata,
    broker: broker === null ? null : { replicaManager: broker.replicaManager, groupCoordinator: broker.groupCoordinator, transactionCoordinator: broker.transactionCoordinator },
    quorum: {
      get leaderAndEpoch() {
        return raft.leaderAndEpoch;
      },
      get highWatermark() {
        return raft.highWatermark;
      },
      voterIds: () => raft.voterSet.ids,
      describeQuorum: () => node.shared.raftRequests.describeQuorum(),
    },
    nowMs: () => node.env.clock.nowMs(),
    actionsEnabled: node.config.bool(CONSOLE_ACTIONS_ENABLE_CONFIG),
  };
}
