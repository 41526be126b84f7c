/**
 * How Kafka's Yammer histograms (TotalTimeMs, LogFlushRateAndTimeMs) become
 * Prometheus summaries. The JMX exporter's Kafka rules turn a histogram's
 * `50thPercentile` ... `999thPercentile` attributes into a `quantile` label
 * and its `Count` into `_count`; prom-client's Summary gives the same
 * quantiles (t-digest) plus `_sum`. Kafka's reservoirs are exponentially
 * decaying, biased to the last five minutes; the summaries keep a sliding
 * five-minute window in five buckets.
 */
export const KAFKA_QUANTILES = [0.5, 0.75, 0.95, 0.98, 0.99, 0.999];
export const SUMMARY_MAX_AGE_SECONDS = 300;
export const SUMMARY_AGE_BUCKETS = 5;
