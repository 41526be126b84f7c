/**
 * The `spool` package's public entry: an embeddable broker for tests and
 * tools, and Spool's Kafka client.
 *
 *   import { startBroker, Producer, Consumer, Admin } from 'spool';
 */
export { startBroker, Broker, type StartBrokerOptions, type RunningBroker } from './server/broker.js';
export * from './client/index.js';
