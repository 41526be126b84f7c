/**
 * The client side of the HTTP seam: one GET of a JSON document from an
 * operator listener (a broker's web console API, for `spool doctor`).
 * Like the listeners (http.ts), it is outside the Kafka data path and has
 * no simulated version. Answers are bounded: a body over
 * HTTP_GET_BODY_BYTES_MAX is refused, as is one that is not JSON.
 */

/** The largest JSON body read. */
export const HTTP_GET_BODY_BYTES_MAX = 4 * 1024 * 1024;

export type JsonGet = (url: string, options: { timeoutMs: number }) => Promise<unknown>;

export class HttpGetError extends Error {
  override readonly name = 'HttpGetError';
}

/** GETs `url` and parses its JSON body; rejects with an HttpGetError on a non-2xx status, a network error, a timeout or a bad body. */
export const httpGetJson: JsonGet = async (url, options) => {
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(options.timeoutMs), headers: { accept: 'application/json' } });
  } catch (error) {
    throw new HttpGetError(`GET ${url}: ${(error as Error).message}`);
  }
  const body = Buffer.from(await response.arrayBuffer());
  if (!response.ok) throw new HttpGetError(`GET ${url}: HTTP ${response.status}`);
  if (body.length > HTTP_GET_BODY_BYTES_MAX) throw new HttpGetError(`GET ${url}: body of ${body.length} bytes is over ${HTTP_GET_BODY_BYTES_MAX}`);
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    throw new HttpGetError(`GET ${url}: the body is not JSON`);
  }
};
