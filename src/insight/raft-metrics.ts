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
import { Gauge, type Registry } from 'prom-client';

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
  private readonly leader: Gauge;
  private readonly epoch: Gauge;
  private readonly highWatermark: Gauge;
  private readonly logEndOffset: Gauge;
  private readonly state: Gauge<'state'>;

  constructor(
    registry: Registry,
    private readonly sources: RaftMetricsSources,
  ) {
    const registers = [registry];
    this.leader = new Gauge({ name: `${PREFIX}_current_leader`, help: "The current quorum leader's id; -1 indicates unknown", registers });
    this.epoch = new Gauge({ name: `${PREFIX}_current_epoch`, help: 'The current quorum epoch', registers });
    this.highWatermark = new Gauge({ name: `${PREFIX}_high_watermark`, help: 'The high watermark maintained on this member; -1 if it is unknown', registers });
    this.logEndOffset = new Gauge({ name: `${PREFIX}_log_end_offset`, help: 'The current raft log end offset', registers });
    this.state = new Gauge({ name: `${PREFIX}_current_state`, help: "The current state of this member (1 for the state it is in; Kafka's current-state string as a label)", labelNames: ['state'], registers });
  }

  refresh(): void {
    const raft = this.sources.raft();
    this.state.reset();
    if (raft === null) return;
    this.leader.set(raft.leaderAndEpoch.leaderId ?? -1);
    this.epoch.set(raft.leaderAndEpoch.epoch);
    this.highWatermark.set(raft.highWatermark ?? -1);
    this.logEndOffset.set(raft.logEndOffset);
    this.state.set({ state: kafkaState(raft, this.sources.nodeId) }, 1);
  }
}
