/**
 * Broker settings the group tests need: short consumer-protocol heartbeats
 * and sessions (Kafka's minimums are 5 s and 45 s by default) so rebalances
 * and session expiry settle in seconds, and no initial rebalance delay. A
 * Kafka broker used through SPOOL_E2E_BOOTSTRAP needs the same lines in its
 * server.properties (KAFKA_EXTRA_CONFIG for test/interop/kafka/kafka.sh).
 */
export const GROUP_TEST_BROKER_CONFIG = {
  'group.consumer.min.heartbeat.interval.ms': 500,
  'group.consumer.heartbeat.interval.ms': 500,
  'group.consumer.min.session.timeout.ms': 6000,
  'group.consumer.session.timeout.ms': 6000,
  'group.initial.rebalance.delay.ms': 0,
};
