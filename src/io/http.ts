/**
 * The HTTP seam: the operator-facing listeners (`metrics.listener`,
 * `console.listener`) serve plain HTTP through Node's `http` module, reached
 * as `Env.http` so that an embedded node's kill closes them as it closes
 * its Kafka listeners. They are not part of the Kafka data path, so the
 * simulator has no version of them: a simulated node leaves both unset.
 *
 * A handler sees the method, the decoded path and the query, and returns a
 * whole response; request bodies are read up to `maxBodyBytes` (a POST of
 * the console's confirmed actions is the only user) and a larger one is
 * answered 413 without calling the handler.
 */
import * as http from 'node:http';
import { ConfigError } from '../common/config.js';

export interface HttpRequest {
  readonly method: string;
  /** The path without the query, percent-decoded segment by segment. */
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
}

export interface HttpResponse {
  readonly status: number;
  readonly contentType: string;
  readonly body: string | Buffer;
  readonly headers?: Readonly<Record<string, string>>;
}

export type HttpHandler = (request: HttpRequest) => HttpResponse | Promise<HttpResponse>;

export interface HttpListener {
  readonly host: string;
  readonly port: number;
  /** Stops accepting, closes every open connection (keep-alive ones too) and resolves once the server is closed. */
  close(): Promise<void>;
}

/** The HTTP part of the environment (Env.http): how a node opens its operator listeners. */
export interface HttpNetwork {
  listen(address: HttpListenerAddress, handler: HttpHandler, maxBodyBytes?: number): Promise<HttpListener>;
}

/** The largest request body an operator listener reads. */
export const HTTP_MAX_BODY_BYTES = 64 * 1024;

export interface HttpListenerAddress {
  readonly host: string;
  readonly port: number;
}

/**
 * Parses a listener value of the form `http://host:port` (host may be
 * empty for all interfaces, or `[ipv6]`; port 0 picks a free one).
 */
export function parseHttpListener(name: string, value: string): HttpListenerAddress {
  const match = /^http:\/\/(\[[^\]]*\]|[^:/]*):(\d+)\/?$/.exec(value.trim());
  if (match === null) throw new ConfigError(`Invalid value ${value} for configuration ${name}: expected http://host:port`);
  const port = Number(match[2]);
  if (port > 65535) throw new ConfigError(`Invalid value ${value} for configuration ${name}: port out of range`);
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
}

export function textResponse(status: number, text: string): HttpResponse {
  return { status, contentType: 'text/plain; charset=utf-8', body: text };
}

export function jsonResponse(value: unknown, status = 200): HttpResponse {
  return { status, contentType: 'application/json; charset=utf-8', body: JSON.stringify(value) };
}

export async function listenHttp(address: HttpListenerAddress, handler: HttpHandler, maxBodyBytes = HTTP_MAX_BODY_BYTES): Promise<HttpListener> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    req.on('data', (chunk: Buffer) => {
      if (refused) return;
      size += chunk.length;
      if (size > maxBodyBytes) {
        refused = true;
        send(res, textResponse(413, `request body above ${maxBodyBytes} bytes\n`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (refused) return;
      let request: HttpRequest;
      try {
        const url = new URL(req.url ?? '/', 'http://localhost');
        const path = url.pathname.split('/').map((segment) => decodeURIComponent(segment)).join('/');
        request = { method: req.method ?? 'GET', path, query: url.searchParams, headers: req.headers, body: Buffer.concat(chunks) };
      } catch {
        send(res, textResponse(400, 'malformed request path\n'));
        return;
      }
      Promise.resolve()
        .then(() => handler(request))
        .then(
          (response) => send(res, response),
          (error: unknown) => send(res, textResponse(500, `${error instanceof Error ? error.message : String(error)}\n`)),
        );
    });
    req.on('error', () => res.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host || undefined, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address();
  const port = typeof bound === 'object' && bound !== null ? bound.port : address.port;
  return {
    host: address.host,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function send(res: http.ServerResponse, response: HttpResponse): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(response.status, { 'content-type': response.contentType, 'cache-control': 'no-store', ...response.headers });
  res.end(response.body);
}

/** The environment's HTTP for the operator listener `config`; an environment without one (the simulator's) cannot serve it. */
export function operatorHttp(env: { readonly http?: HttpNetwork }, config: string): HttpNetwork {
  if (env.http === undefined) throw new ConfigError(`${config} is set, but this node's environment has no HTTP listeners`);
  return env.http;
}

/** Node's `http` module, as realEnv gives it. */
export const realHttp: HttpNetwork = { listen: listenHttp };
