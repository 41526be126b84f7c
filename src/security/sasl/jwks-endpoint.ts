/**
 * A JWKS fetched from an http(s) `sasl.oauthbearer.jwks.endpoint.url` and kept
 * fresh, as Kafka's RefreshingHttpsJwks does:
 *   - fetched once at start (init); a failure stops the start;
 *   - refreshed every `sasl.oauthbearer.jwks.endpoint.refresh.ms` (default 1 h);
 *   - refreshed at once when a token names a kid the keys lack, at most once
 *     per MISSING_KEY_ID_IN_FLIGHT_MS for that kid, remembering at most
 *     MISSING_KEY_ID_CACHE_ENTRIES kids (least recently asked dropped) and
 *     none longer than MISSING_KEY_ID_LENGTH_MAX characters; the token that
 *     asked is still refused, as in Kafka;
 *   - one refresh at a time; a refresh retries a failed fetch after
 *     `retry.backoff.ms` doubling, for at most `retry.backoff.max.ms` in all
 *     (Kafka's Retry), and when it still fails the old keys stay and a
 *     warning is logged;
 *   - a successful refresh replaces the whole key list at once.
 * HTTPS uses Node's fetch, so the server is trusted through Node's default
 * CAs plus NODE_EXTRA_CA_CERTS (the counterpart of the JVM's default
 * truststore; the JAAS entry's ssl.* options Kafka also reads are not served).
 * The timers come from the node's env (src/io), so tests drive them.
 */
import type { Logger } from '../../common/logger.js';
import type { Timers } from '../../io/clock.js';
import type { VerificationKey } from './oauth-jwks.js';

export const MISSING_KEY_ID_CACHE_ENTRIES = 16;
export const MISSING_KEY_ID_IN_FLIGHT_MS = 60_000;
export const MISSING_KEY_ID_LENGTH_MAX = 1000;

/** The environment variable standing for Kafka's org.apache.kafka.sasl.oauthbearer.allowed.urls system property. */
export const ALLOWED_URLS_VARIABLE = 'SPOOL_OAUTHBEARER_ALLOWED_URLS';

/** The comma-separated allowed URLs (Kafka's default: none). */
export function allowedJwksUrls(env: Readonly<Record<string, string | undefined>>): ReadonlySet<string> {
  return new Set((env[ALLOWED_URLS_VARIABLE] ?? '').split(',').map((u) => u.trim()));
}

export type JwksFetch = (url: string) => Promise<unknown>;

export interface RefreshingJwksOptions {
  url: string;
  refreshMs: number;
  retryBackoffMs: number;
  retryBackoffMaxMs: number;
  timers: Timers;
  fetchKeys: () => Promise<VerificationKey[]>;
  log: Logger;
}

export class RefreshingJwks {
  private current: readonly VerificationKey[] = [];
  /** kid → when it may ask for a refresh again; Map order is recency (re-inserted on each ask). */
  private readonly missingKeyIds = new Map<string, number>();
  private inFlight: Promise<void> | null = null;
  private periodic: { cancel(): void } | null = null;
  private closed = false;

  constructor(private readonly options: RefreshingJwksOptions) {}

  get keys(): readonly VerificationKey[] {
    return this.current;
  }

  /** The refresh under way, if any (tests await it). */
  get refreshing(): Promise<void> | null {
    return this.inFlight;
  }

  /** The first fetch; rejects when it fails. Then starts the periodic refresh. */
  async init(): Promise<void> {
    this.current = Object.freeze(await this.options.fetchKeys());
    this.options.log.info(`JWKS validation key refresh of ${this.options.url} started with a refresh interval of ${this.options.refreshMs} ms`);
    this.schedulePeriodic();
  }

  close(): void {
    this.closed = true;
    this.periodic?.cancel();
    this.periodic = null;
  }

  private schedulePeriodic(): void {
    if (this.closed) return;
    this.periodic = this.options.timers.schedule(this.options.refreshMs, () => {
      this.schedulePeriodic();
      this.refresh();
    });
  }

  /** Asks for a refresh because a token named `kid`; true when one was started. */
  maybeExpediteRefresh(kid: string, nowMs: number): boolean {
    if (kid.length > MISSING_KEY_ID_LENGTH_MAX) {
      this.options.log.warn(`Key ID ${kid.slice(0, MISSING_KEY_ID_LENGTH_MAX)} (trimmed to first ${MISSING_KEY_ID_LENGTH_MAX} characters out of ${kid.length} total) was too long to cache`);
      return false;
    }
    const nextCheckMs = this.missingKeyIds.get(kid);
    if (nextCheckMs !== undefined) {
      this.missingKeyIds.delete(kid);
      this.missingKeyIds.set(kid, nextCheckMs);
      if (nextCheckMs > nowMs) return false;
    }
    this.missingKeyIds.delete(kid);
    this.missingKeyIds.set(kid, nowMs + MISSING_KEY_ID_IN_FLIGHT_MS);
    while (this.missingKeyIds.size > MISSING_KEY_ID_CACHE_ENTRIES) this.missingKeyIds.delete(this.missingKeyIds.keys().next().value!);
    this.options.timers.defer(() => this.refresh());
    return true;
  }

  /** One refresh with Kafka's retries; a concurrent call is ignored. */
  private refresh(): void {
    if (this.inFlight !== null || this.closed) return;
    this.options.log.debug(`OAuth JWKS refresh of ${this.options.url} starting`);
    this.inFlight = this.fetchWithRetries().then(
      (keys) => {
        for (const key of keys) if (key.kid !== null) this.missingKeyIds.delete(key.kid);
        this.current = Object.freeze(keys);
        this.options.log.info(`OAuth JWKS refresh of ${this.options.url} complete`);
      },
      (error: unknown) => this.options.log.warn(`OAuth JWKS refresh of ${this.options.url} encountered an error; not updating local JWKS cache: ${(error as Error).message}`),
    ).finally(() => {
      this.inFlight = null;
    });
  }

  /**
   * Kafka's Retry: attempts until one succeeds or the backoffs would pass
   * retry.backoff.max.ms in all (Kafka counts the attempts' own time in that
   * window too; here only the waits count).
   */
  private async fetchWithRetries(): Promise<VerificationKey[]> {
    let waitedMs = 0;
    let firstError: unknown = null;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.options.fetchKeys();
      } catch (error) {
        firstError ??= error;
        const waitMs = Math.min(this.options.retryBackoffMs * 2 ** (attempt - 1), this.options.retryBackoffMaxMs - waitedMs);
        if (waitMs <= 0 || this.closed) throw firstError;
        this.options.log.warn(`Attempt ${attempt} to fetch the JWKS of ${this.options.url} failed (${(error as Error).message}); retrying in ${waitMs} ms`);
        await new Promise<void>((resolve) => this.options.timers.schedule(waitMs, resolve));
        waitedMs += waitMs;
      }
    }
  }
}
