/**
 * Metric families that write their own Prometheus text (format 0.0.4), for
 * the families a scrape spends its time on: per-partition and per-topic
 * gauges, the request counters, the latency percentiles, GC and
 * event-loop delay.
 *
 * prom-client's Gauge and Counter keep their series in a map keyed by a
 * string built from the labels at every `set` (keys sorted, values
 * joined), hand the registry a fresh `{value, labels}` object per series at
 * each scrape, and the registry formats and escapes every label of every
 * line again. Under the 100-byte produce benchmark that was most of a
 * scrape's CPU (docs/PERFORMANCE.md, "Cost of metrics"). Here a series'
 * labels are a `Labels`, formatted and escaped once when made and kept by
 * whoever owns the series (a partition, a topic, an API version); a scrape
 * writes `name{labels} value` lines from the family's `collect` straight
 * into the text.
 *
 * The text is what prom-client writes for the same samples, byte for byte:
 * `# HELP name help` (backslash and newline escaped), `# TYPE name type`,
 * then one line per sample, label values escaped (backslash, newline,
 * double quote) in the order the labels were given, values as prom-client
 * prints them (`Nan`, `+Inf`, `-Inf`, else JavaScript's number text).
 *
 * A family is also registered in the node's prom-client Registry, as a
 * metric of prom-client's shape (`get()` gives its samples as prom-client's
 * values), so `registry.metrics()`, `getSingleMetric` and
 * `getMetricsAsJSON` see it like any other metric; `renderRegistry` takes
 * the direct path for these families and prom-client's for the rest.
 */
import type { Registry } from 'prom-client';

/** One series' label names and values, with their text as it goes between the braces. */
export class Labels {
  /** `name="value",...`, values escaped; '' without labels. */
  readonly text: string;

  constructor(readonly values: Readonly<Record<string, string>>) {
    this.text = Object.entries(values)
      .map(([name, value]) => `${name}="${escapeLabelValue(value)}"`)
      .join(',');
  }

  /** These labels and one more after them (a histogram's `le`, a summary's `quantile`). */
  with(name: string, value: string): Labels {
    return new Labels({ ...this.values, [name]: value });
  }
}

export const NO_LABELS = new Labels({});

/** Escapes a label value as the text format wants: backslash, newline and double quote. */
export function escapeLabelValue(value: string): string {
  return escapeHelp(value).replace(/"/g, '\\"');
}

/** Escapes HELP text: backslash and newline. */
export function escapeHelp(help: string): string {
  return help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** A sample value as prom-client prints it. */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'Nan';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return `${value}`;
}

export type MetricType = 'counter' | 'gauge' | 'histogram';

/** Where a family's `collect` puts its samples; `suffix` names a histogram's `_bucket`, `_sum`, `_count`. */
export interface SampleWriter {
  sample(labels: Labels, value: number, suffix?: string): void;
}

export interface FamilyOptions {
  name: string;
  help: string;
  type: MetricType;
  /** Writes the family's samples as of now; called once per scrape. */
  collect(writer: SampleWriter): void;
}

/** A sample in prom-client's shape, as its Registry renders and its getMetricsAsJSON returns them. */
interface PromValue {
  value: number;
  labels: Record<string, string>;
  metricName: string;
}

/** Renders into one string: the lines of a family, joined by newlines. */
class TextWriter implements SampleWriter {
  text = '';

  constructor(private readonly name: string) {}

  sample(labels: Labels, value: number, suffix = ''): void {
    const braces = labels.text === '' ? '' : `{${labels.text}}`;
    this.text += `\n${this.name}${suffix}${braces} ${formatValue(value)}`;
  }
}

class ValuesWriter implements SampleWriter {
  readonly values: PromValue[] = [];

  constructor(private readonly name: string) {}

  sample(labels: Labels, value: number, suffix = ''): void {
    this.values.push({ value, labels: { ...labels.values }, metricName: `${this.name}${suffix}` });
  }
}

const FAMILY = Symbol('spool.metricFamily');

export class MetricFamily {
  readonly name: string;
  private readonly header: string;
  private readonly collectInto: (writer: SampleWriter) => void;

  constructor(registry: Registry, options: FamilyOptions) {
    this.name = options.name;
    this.header = `# HELP ${options.name} ${escapeHelp(options.help)}\n# TYPE ${options.name} ${options.type}`;
    this.collectInto = options.collect;
    const family = this;
    const metric = {
      [FAMILY]: family,
      name: options.name,
      help: options.help,
      type: options.type,
      aggregator: 'sum',
      get: async () => ({ name: options.name, help: options.help, type: options.type, aggregator: 'sum', values: family.values() }),
      // The values are the node's state, not the family's: nothing of them to reset.
      reset: () => undefined,
    };
    registry.registerMetric(metric as never);
  }

  /** The family's text: HELP, TYPE and its samples, without a trailing newline (as prom-client's getMetricsAsString). */
  render(): string {
    const writer = new TextWriter(this.name);
    this.collectInto(writer);
    return this.header + writer.text;
  }

  private values(): PromValue[] {
    const writer = new ValuesWriter(this.name);
    this.collectInto(writer);
    return writer.values;
  }
}

/**
 * The registry's exposition, as `registry.metrics()` writes it (families in
 * registration order, separated by a blank line, a final newline), with
 * this module's families rendered directly.
 */
export async function renderRegistry(registry: Registry): Promise<string> {
  // Every family collects now, in order (prom-client's get() runs its collect before its first await), as in registry.metrics().
  const parts = registry.getMetricsAsArray().map((metric) => {
    const family = (metric as { [FAMILY]?: MetricFamily })[FAMILY];
    return family !== undefined ? family.render() : registry.getSingleMetricAsString(metric.name);
  });
  return `${(await Promise.all(parts)).join('\n\n')}\n`;
}

/** A gauge without labels holding one number (0 until set), as an unlabelled prom-client Gauge is. */
export class ValueGauge {
  private value = 0;

  constructor(registry: Registry, options: { name: string; help: string }) {
    new MetricFamily(registry, { ...options, type: 'gauge', collect: (writer) => writer.sample(NO_LABELS, this.value) });
  }

  set(value: number): void {
    this.value = value;
  }
}

/**
 * Labels by a key, for series that come and go with the node's state (a
 * group's offsets, a followed partition): kept while refreshes ask for
 * them, so the cache is bounded by the series that exist.
 */
export class LabelsCache {
  /** Asked for by the previous refresh. */
  private previous = new Map<string, Labels>();
  /** Asked for by the current one. */
  private current = new Map<string, Labels>();

  /** Starts a refresh: what the previous one did not ask for is dropped. */
  rotate(): void {
    this.previous = this.current;
    this.current = new Map();
  }

  get(key: string, values: () => Record<string, string>): Labels {
    let labels = this.current.get(key);
    if (labels !== undefined) return labels;
    labels = this.previous.get(key) ?? new Labels(values());
    this.current.set(key, labels);
    return labels;
  }
}
