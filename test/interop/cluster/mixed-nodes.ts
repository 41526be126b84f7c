/**
 * The two halves of the mixed-cluster tests under a Spool controller
 * (mixed-spool-controller.test.ts, mixed-replication.test.ts): a
 * controller-only Spool node started in this process, and the
 * server.properties lines of the broker-only nodes, Spool or Kafka 4.4
 * processes, that follow it.
 */
import { BrokerConfig } from '../../../src/common/config.js';
import { silentLogger } from '../../../src/common/logger.js';
import { realEnv } from '../../../src/io/env.js';
import { SpoolNode } from '../../../src/node/node.js';

export const MIXED_CLUSTER_ID = 'MkU3OEVBNTcwNTJENDM2Qg';

/** A started controller-only Spool node, the only voter of its quorum, on `port`. */
export async function startSpoolController(options: { nodeId: number; port: number; logDir: string; config?: Record<string, string | number> }): Promise<SpoolNode> {
  const controller = new SpoolNode(
    BrokerConfig.fromObject({
      'process.roles': 'controller',
      'node.id': options.nodeId,
      'cluster.id': MIXED_CLUSTER_ID,
      'controller.quorum.voters': `${options.nodeId}@127.0.0.1:${options.port}`,
      'controller.listener.names': 'CONTROLLER',
      listeners: `CONTROLLER://127.0.0.1:${options.port}`,
      'listener.security.protocol.map': 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
      'log.dirs': options.logDir,
      ...options.config,
    }),
    realEnv,
    silentLogger,
  );
  await controller.start();
  return controller;
}

/** What a broker-only node of either kind sets to follow the one controller, with single-broker internal topics. */
export function brokerOfControllerProperties(options: { nodeId: number; controllerId: number; controllerPort: number }): string[] {
  return [
    'process.roles=broker',
    `node.id=${options.nodeId}`,
    `controller.quorum.voters=${options.controllerId}@127.0.0.1:${options.controllerPort}`,
    'controller.listener.names=CONTROLLER',
    'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
    'inter.broker.listener.name=PLAINTEXT',
    'offsets.topic.replication.factor=1',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
  ];
}

/** A Kafka broker's lines: node `nodeId` on `port`, following the one controller. */
export function kafkaBrokerProperties(options: { nodeId: number; port: number; controllerId: number; controllerPort: number }): string[] {
  return [
    ...brokerOfControllerProperties(options),
    `listeners=PLAINTEXT://127.0.0.1:${options.port}`,
    'share.coordinator.state.topic.replication.factor=1',
    'share.coordinator.state.topic.min.isr=1',
    'group.initial.rebalance.delay.ms=0',
  ];
}
