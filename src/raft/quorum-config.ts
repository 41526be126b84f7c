/**
 * The quorum's timing (Kafka's QuorumConfig), under Kafka's config names.
 * Election and fetch timeouts are randomised per use from env.random, as
 * Kafka does, so voters rarely time out together.
 */
export interface QuorumConfig {
  /** controller.quorum.election.timeout.ms: how long without a leader before asking for votes. */
  electionTimeoutMs: number;
  /** controller.quorum.fetch.timeout.ms: how long a follower waits for a successful fetch before seeking a new leader. */
  fetchTimeoutMs: number;
  /** controller.quorum.election.backoff.max.ms: the longest backoff before a rejected candidate tries again. */
  electionBackoffMaxMs: number;
  /** controller.quorum.request.timeout.ms: how long any raft request waits for its response. */
  requestTimeoutMs: number;
  /** controller.quorum.retry.backoff.ms: the pause before a failed request is retried. */
  retryBackoffMs: number;
  /** replica.fetch.wait.max.ms: how long the leader holds a fetch that found nothing new (Kafka's raft manager uses it). */
  fetchMaxWaitMs: number;
  /** controller.quorum.auto.join.enable: a controller that observes a kraft.version 1 quorum asks to be added as a voter (KIP-853). */
  autoJoinEnable: boolean;
}

export const QUORUM_CONFIG_DEFAULTS: QuorumConfig = {
  electionTimeoutMs: 1000,
  fetchTimeoutMs: 2000,
  electionBackoffMaxMs: 1000,
  requestTimeoutMs: 2000,
  retryBackoffMs: 20,
  fetchMaxWaitMs: 500,
  autoJoinEnable: false,
};

/** Reads the quorum timing from a node's config (the names above). */
export function quorumConfigFrom(config: { int(name: string): number; bool(name: string): boolean }): QuorumConfig {
  return {
    electionTimeoutMs: config.int('controller.quorum.election.timeout.ms'),
    fetchTimeoutMs: config.int('controller.quorum.fetch.timeout.ms'),
    electionBackoffMaxMs: config.int('controller.quorum.election.backoff.max.ms'),
    requestTimeoutMs: config.int('controller.quorum.request.timeout.ms'),
    retryBackoffMs: config.int('controller.quorum.retry.backoff.ms'),
    fetchMaxWaitMs: config.int('replica.fetch.wait.max.ms'),
    autoJoinEnable: config.bool('controller.quorum.auto.join.enable'),
  };
}
