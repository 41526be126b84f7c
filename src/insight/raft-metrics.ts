/**
 * Kafka's KRaft gauges of the metadata log (kafka.server:type=raft-metrics,
 * KafkaRaftMetrics), read from the node's Raft client at each scrape, as
 * the JMX exporter maps them (dashes to underscores):
 * `kafka_server_raft_metrics_current_leader` (-1: unknown),
 * `..._current_epoch`, `..._high_watermark` (-1: unknown) and
 * `..._log_end_offset`. Kafka's `current-state` is a string, which the JMX
 * exporter does not export; here it is `..._current_state{state="..."} 1`
 * with Kafka's names: leader, prospective, candidate, follower, observer
 * (a follower that is not a voter), unattached (a resigned leader too, as
 * in Kafka). Not exported: current-vote and the `-voted` states, and the
 * sensors (commit-latency, election-latency, append-records-rate,
 * fetch-records-rate, poll-idle-ratio).
 */
import type { Registry } from 'prom-client';
import { Labels, MetricFamily, ValueGauge } from './exposition.js';

/** What the gauges read of a Raft client. */
export interface RaftView {
  leaderAndEpoch: { leaderId: number | null; epoch: number };
  role: string;
  highWatermark: number | null;
  logEndOffset: number;
  voterSet: { hasId(id: number): boolean };
}

export interface RaftMetricsSources {
  nodeId: number;
  /** The metadata log's Raft client, or null while it is not open. */
  raft(): RaftView | null;
}

const PREFIX = 'kafka_server_raft_metrics';

/** Kafka's current-state value for a Spool role. */
function kafkaState(raft: RaftView, nodeId: number): string {
  switch (raft.role) {
    case 'leader':
    case 'prospective':
    case 'candidate':
      return raft.role;
    case 'follower':
      return raft.voterSet.hasId(nodeId) ? 'follower' : 'observer';
    default:
      return 'unattached';
  }
}

export class RaftMetrics {
  private readonly leader: ValueGauge;
  private readonly epoch: ValueGauge;
  private readonly highWatermark: ValueGauge;
  private readonly logEndOffset: ValueGauge;
  /** The `{state}` of the latest refresh, null while the Raft client is not open. */
  private state: Labels | null = null;
  private readonly stateLabels = new Map<string, Labels>();

  constructor(
    registry: Registry,
    private readonly sources: RaftMetricsSources,
  ) {
    this.leader = new ValueGauge(registry, { name: `${PREFIX}_current_leader`, help: "The current quorum leader's id; -1 indicates unknown" });
    this.epoch = new ValueGauge(registry, { name: `${PREFIX}_current_epoch`, help: 'The current quorum epoch' });
    this.highWatermark = new ValueGauge(registry, { name: `${PREFIX}_high_watermark`, help: 'The high watermark maintained on this member; -1 if it is unknown' });
    this.logEndOffset = new ValueGauge(registry, { name: `${PREFIX}_log_end_offset`, help: 'The current raft log end offset' });
    new MetricFamily(registry, {
      name: `${PREFIX}_current_state`,
      help: "The current state of this member (1 for the state it is in; Kafka's current-state string as a label)",
      type: 'gauge',
      collect: (writer) => {
        if (this.state !== null) writer.sample(this.state, 1);
      },
    });
  }

  refresh(): void {
    const raft = this.sources.raft();
    this.state = null;
    if (raft === null) return;
    this.leader.set(raft.leaderAndEpoch.leaderId ?? -1);
    this.epoch.set(raft.leaderAndEpoch.epoch);
    this.highWatermark.set(raft.highWatermark ?? -1);
    this.logEndOffset.set(raft.logEndOffset);
    const state = kafkaState(raft, this.sources.nodeId);
    let labels = this.stateLabels.get(state);
    if (labels === undefined) {
      labels = new Labels({ state });
      this.stateLabels.set(state, labels);
    }
    this.state = labels;
  }
}
