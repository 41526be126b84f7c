/**
 * The `spool` package's public entry: an embeddable broker for tests and
 * tools, and Spool's Kafka client.
 *
 *   import { startBroker, Producer, Consumer, Admin } from 'spool';
 */
export { startBroker, type StartBrokerOptions, type RunningBroker } from './node/embedded.js';
export { SpoolNode } from './node/node.js';
export { startCluster, EmbeddedNode, type StartClusterOptions, type RunningCluster } from './node/cluster.js';
export * from './client/index.js';
