/**
 * A simulated request/response network between numbered nodes, driven by
 * the injected timers and random generator (a ManualClock and a
 * SeededRandom in tests and the simulator), so every delivery, loss and
 * partition is replayable from the seed.
 *
 * What it models, as a node sees it over TCP:
 * - each message (request or response) takes a delay drawn uniformly from
 *   [delayMsMin, delayMsMax];
 * - a message may be lost (`dropRate`); its sender learns nothing until its
 *   request times out, as with a silent peer;
 * - a cut link (partition) loses every message over it, in either direction
 *   that was cut, so requests time out, as across a real partition;
 * - a node that is down (not registered) refuses connections: the request
 *   fails after one delay, like a refused TCP connect; a node that goes down
 *   while handling a request never answers it, and sends nothing itself.
 * Messages are opaque here: the caller encodes and decodes them.
 */
import type { Timers } from './clock.js';
import type { Random } from './random.js';

export class SimNetworkError extends Error {
  override readonly name = 'SimNetworkError';
}

export type SimHandler<Req, Res> = (source: number, request: Req) => Promise<Res>;

export interface SimNetworkOptions {
  timers: Timers;
  random: Random;
  delayMsMin?: number;
  delayMsMax?: number;
  /** Probability in [0, 1) that one message is lost. */
  dropRate?: number;
}

interface Registration<Req, Res> {
  handler: SimHandler<Req, Res>;
  /** Changes on every registration, so a restarted node does not answer its predecessor's requests. */
  generation: number;
}

export class SimNetwork<Req, Res> {
  private readonly nodes = new Map<number, Registration<Req, Res>>();
  /** Cut directed links, as `source>destination`. */
  private readonly cut = new Set<string>();
  private generation = 0;
  private readonly delayMsMin: number;
  private readonly delayMsMax: number;
  dropRate: number;

  constructor(private readonly options: SimNetworkOptions) {
    this.delayMsMin = options.delayMsMin ?? 1;
    this.delayMsMax = options.delayMsMax ?? 5;
    this.dropRate = options.dropRate ?? 0;
    if (!(this.delayMsMin >= 0 && this.delayMsMax >= this.delayMsMin)) throw new RangeError(`bad delay range [${this.delayMsMin}, ${this.delayMsMax}]`);
  }

  /** Brings a node up: requests to it reach `handler` from now on. */
  register(node: number, handler: SimHandler<Req, Res>): void {
    this.nodes.set(node, { handler, generation: ++this.generation });
  }

  /** Takes a node down (a crash): it refuses new requests and never answers those it holds. */
  unregister(node: number): void {
    this.nodes.delete(node);
  }

  /** Cuts every link between the groups, both ways; links inside a group stay. */
  partition(groups: readonly (readonly number[])[]): void {
    for (const [i, group] of groups.entries()) {
      for (const other of groups.slice(i + 1)) {
        for (const a of group) for (const b of other) this.cut.add(`${a}>${b}`).add(`${b}>${a}`);
      }
    }
  }

  /** Cuts the links between `node` and every other node. */
  isolate(node: number, others: readonly number[]): void {
    this.partition([[node], others.filter((other) => other !== node)]);
  }

  heal(): void {
    this.cut.clear();
  }

  isConnected(source: number, destination: number): boolean {
    return !this.cut.has(`${source}>${destination}`);
  }

  /** Sends `request` and resolves with the response, or rejects with SimNetworkError (refused, lost past `timeoutMs`). */
  send(source: number, destination: number, request: Req, options: { timeoutMs: number }): Promise<Res> {
    return new Promise<Res>((resolve, reject) => {
      let settled = false;
      const settle = (outcome: () => void): void => {
        if (settled) return;
        settled = true;
        timeout.cancel();
        outcome();
      };
      const timeout = this.options.timers.schedule(options.timeoutMs, () =>
        settle(() => reject(new SimNetworkError(`request from ${source} to ${destination} timed out after ${options.timeoutMs} ms`))),
      );
      this.afterDelay(() => {
        if (!this.nodes.has(source)) return settle(() => reject(new SimNetworkError(`node ${source} is down`)));
        const target = this.nodes.get(destination);
        if (target === undefined) return settle(() => reject(new SimNetworkError(`node ${destination} refused the connection from ${source}`)));
        if (this.lost(source, destination)) return;
        target.handler(source, request).then(
          (response) => this.deliverResponse({ source, destination, generation: target.generation }, () => settle(() => resolve(response))),
          (error: unknown) => this.deliverResponse({ source, destination, generation: target.generation }, () => settle(() => reject(error as Error))),
        );
      });
    });
  }

  private deliverResponse(route: { source: number; destination: number; generation: number }, deliver: () => void): void {
    if (this.nodes.get(route.destination)?.generation !== route.generation) return;
    if (this.lost(route.destination, route.source)) return;
    this.afterDelay(deliver);
  }

  private lost(from: number, to: number): boolean {
    if (!this.isConnected(from, to)) return true;
    return this.dropRate > 0 && this.options.random.nextFloat() < this.dropRate;
  }

  private afterDelay(callback: () => void): void {
    const spanMs = this.delayMsMax - this.delayMsMin;
    const delayMs = this.delayMsMin + (spanMs === 0 ? 0 : this.options.random.nextInt(spanMs + 1));
    this.options.timers.schedule(delayMs, callback);
  }
}
