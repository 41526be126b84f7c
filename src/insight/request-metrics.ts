/**
 * Kafka's RequestMetrics (kafka.network:type=RequestMetrics), fed by the
 * socket server once per request served (SocketServer.requestObserver):
 *
 * - RequestsPerSec,request=R,version=V →
 *   `kafka_network_requestmetrics_requests_total{request,version}`;
 * - ErrorsPerSec,request=R,error=E →
 *   `kafka_network_requestmetrics_errors_total{request,error}`, counting
 *   every `errorCode` field of the response (NONE included), which is what
 *   Kafka's per-response errorCounts() add up to;
 * - TotalTimeMs,request=R → `kafka_network_requestmetrics_totaltimems`
 *   {request,quantile} and `..._totaltimems_count{request}` (see
 *   summaries.ts), from the frame being read off the socket to the response
 *   handed to it.
 *
 * As Kafka, Fetch is named FetchConsumer or FetchFollower in the request
 * and time metrics, and Fetch in the error metrics.
 *
 * Per request the hot path does one map lookup for the (API, version)
 * counter, which also holds the API's latency histogram, a walk of the
 * response for its error codes with one lookup per distinct code, and no
 * allocation once every counter exists; a scrape writes the plain numbers
 * with label text made when the counter was (exposition.ts). The maps are bounded by the API keys, versions and
 * error codes that exist.
 */
import type { Registry } from 'prom-client';
import { apiByKey } from '../protocol/apis.js';
import { ErrorCode, errorName } from '../protocol/errors.js';
import type { RequestObserver } from '../server/socket-server.js';
import type { Clock } from '../io/clock.js';
import { Labels, MetricFamily, NO_LABELS, type SampleWriter } from './exposition.js';
import { LatencyHistogram, registerKafkaHistogram } from './summaries.js';

const FETCH_KEY = 1;
/** Room for every version and error code in one map key: api key × this + version (or error code + 1). */
const KEY_STRIDE = 1024;

interface LabelledCount {
  readonly labels: Labels;
  count: number;
}

interface RequestCount extends LabelledCount {
  /** TotalTimeMs of the request name (shared by its versions). */
  readonly totalTime: LatencyHistogram;
}

export interface RequestMetricsSources {
  clock: Clock;
  /** Requests read and waiting for their connection's turn (the socket server's queue). */
  queuedRequestCount(): number;
}

export class RequestMetrics implements RequestObserver {
  /** By (api key, version, from a follower). */
  private readonly requests = new Map<number, RequestCount>();
  private readonly errors = new Map<number, LabelledCount>();
  /** By request name. */
  private readonly totalTimes = new Map<string, { labels: Labels; histogram: LatencyHistogram }>();
  /** Error codes of the response being counted, reused between requests. */
  private readonly seen = new Map<number, number>();
  private readonly clock: Clock;

  constructor(registry: Registry, sources: RequestMetricsSources) {
    this.clock = sources.clock;
    const writeCounts = (counts: ReadonlyMap<number, LabelledCount>) => (writer: SampleWriter) => {
      for (const entry of counts.values()) writer.sample(entry.labels, entry.count);
    };
    new MetricFamily(registry, {
      name: 'kafka_network_requestmetrics_requests_total',
      help: 'Requests served, by API and version (RequestsPerSec)',
      type: 'counter',
      collect: writeCounts(this.requests),
    });
    new MetricFamily(registry, {
      name: 'kafka_network_requestmetrics_errors_total',
      help: 'Error codes in responses, NONE included, by API and error (ErrorsPerSec)',
      type: 'counter',
      collect: writeCounts(this.errors),
    });
    registerKafkaHistogram(registry, {
      name: 'kafka_network_requestmetrics_totaltimems',
      help: 'Time from reading a request to handing its response to the socket, in ms (TotalTimeMs)',
      histograms: () => this.totalTimes.values(),
    });
    new MetricFamily(registry, {
      name: 'kafka_network_requestchannel_requestqueuesize',
      help: 'Requests read and waiting to be handled, across connections (RequestQueueSize)',
      type: 'gauge',
      collect: (writer) => writer.sample(NO_LABELS, sources.queuedRequestCount()),
    });
  }

  requestCompleted(served: { apiKey: number; version: number; request: unknown; body: Record<string, unknown> | null; totalTimeMs: number }): void {
    const { apiKey, version } = served;
    const fromFollower = apiKey === FETCH_KEY && fetchReplicaId(served.request, version) >= 0;
    const key = (apiKey * KEY_STRIDE + version) * 2 + (fromFollower ? 1 : 0);
    const counted = this.requests.get(key) ?? this.newRequestCount(key, { apiKey, version, fromFollower });
    counted.count++;
    counted.totalTime.record(served.totalTimeMs);
    if (served.body !== null) this.countErrors(apiKey, served.body);
  }

  private countErrors(apiKey: number, body: Record<string, unknown>): void {
    const seen = this.seen;
    seen.clear();
    const collect = ERROR_COLLECTORS[apiKey] ?? collectAllErrorCodes;
    const none = collect(body, seen);
    if (none > 0) this.errorCount(apiKey, NONE).count += none;
    for (const [code, count] of seen) this.errorCount(apiKey, code).count += count;
  }

  private errorCount(apiKey: number, code: number): LabelledCount {
    const key = apiKey * KEY_STRIDE + code + 1;
    return this.errors.get(key) ?? this.newCount(this.errors, key, new Labels({ request: apiName(apiKey), error: errorName(code) }));
  }

  private newRequestCount(key: number, request: { apiKey: number; version: number; fromFollower: boolean }): RequestCount {
    const name = request.apiKey !== FETCH_KEY ? apiName(request.apiKey) : request.fromFollower ? 'FetchFollower' : 'FetchConsumer';
    let totalTime = this.totalTimes.get(name);
    if (totalTime === undefined) {
      totalTime = { labels: new Labels({ request: name }), histogram: new LatencyHistogram(() => this.clock.monotonicMs()) };
      this.totalTimes.set(name, totalTime);
    }
    const entry = { labels: new Labels({ request: name, version: String(request.version) }), count: 0, totalTime: totalTime.histogram };
    this.requests.set(key, entry);
    return entry;
  }

  private newCount(counts: Map<number, LabelledCount>, key: number, labels: Labels): LabelledCount {
    const entry = { labels, count: 0 };
    counts.set(key, entry);
    return entry;
  }
}

function apiName(apiKey: number): string {
  return apiByKey(apiKey)?.name ?? `ApiKey${apiKey}`;
}

/** A follower's fetch carries its replica id (in ReplicaState from v15, KIP-903); a consumer's is -1. */
function fetchReplicaId(request: unknown, version: number): number {
  const fetch = request as { replicaId?: number; replicaState?: { replicaId?: number } };
  return (version >= 15 ? fetch.replicaState?.replicaId : fetch.replicaId) ?? -1;
}

/** Counts a response's error codes: returns how many are NONE (most of them, counted without a map) and puts the others in `into`. */
type ErrorCollector = (body: Record<string, unknown>, into: Map<number, number>) => number;

const NONE = ErrorCode.NONE;

function countCode(into: Map<number, number>, code: number): number {
  if (code === NONE) return 1;
  into.set(code, (into.get(code) ?? 0) + 1);
  return 0;
}

/**
 * Where Produce's and Fetch's responses keep their error codes, read
 * directly: they are most of the requests, and the generic walk (for...in
 * over every object of the response) is the larger part of what counting
 * costs. Same counts as the walk.
 */
const ERROR_COLLECTORS: Readonly<Record<number, ErrorCollector>> = {
  0: (body, into) => {
    let none = 0;
    for (const topic of (body as { responses?: { partitionResponses?: { errorCode: number }[] }[] }).responses ?? []) {
      for (const partition of topic.partitionResponses ?? []) none += countCode(into, partition.errorCode);
    }
    return none;
  },
  [FETCH_KEY]: (body, into) => {
    const fetch = body as { errorCode?: number; responses?: { partitions?: { errorCode: number }[] }[] };
    let none = fetch.errorCode === undefined ? 0 : countCode(into, fetch.errorCode);
    for (const topic of fetch.responses ?? []) for (const partition of topic.partitions ?? []) none += countCode(into, partition.errorCode);
    return none;
  },
};

function collectAllErrorCodes(body: Record<string, unknown>, into: Map<number, number>): number {
  collectErrorCodes(body, into, 0);
  return 0;
}

/** Nesting deeper than any Kafka response (topics → partitions → records errors) is not walked. */
const ERROR_WALK_DEPTH_MAX = 6;

/** Counts every numeric `errorCode` field, skipping byte fields (records). */
function collectErrorCodes(value: unknown, into: Map<number, number>, depth: number): void {
  if (depth > ERROR_WALK_DEPTH_MAX || typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) return;
  if (Array.isArray(value)) {
    for (const element of value) collectErrorCodes(element, into, depth + 1);
    return;
  }
  for (const key in value) {
    const field = (value as Record<string, unknown>)[key];
    if (key === 'errorCode' && typeof field === 'number') into.set(field, (into.get(field) ?? 0) + 1);
    else if (typeof field === 'object' && field !== null) collectErrorCodes(field, into, depth + 1);
  }
}
