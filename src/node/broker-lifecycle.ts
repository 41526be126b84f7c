/**
 * BrokerLifecycleManager: the broker's side of KIP-631, over the controller
 * channel (Kafka's BrokerLifecycleManager). It registers this broker with a
 * fresh incarnation id (BrokerRegistration, which answers with the broker
 * epoch), and once the broker has replayed the metadata log it asks to be
 * unfenced (BrokerHeartbeat with wantFence false).
 *
 * Not done (yet): the periodic heartbeat every broker.heartbeat.interval.ms,
 * retries with backoff while no controller answers, and controlled shutdown
 * (wantShutDown).
 */
import type { Random } from '../io/random.js';
import { ErrorCode, errorInfo } from '../protocol/errors.js';
import { BrokerHeartbeat } from '../protocol/schemas/63-broker-heartbeat.js';
import { BrokerRegistration } from '../protocol/schemas/62-broker-registration.js';
import type { BrokerEndpoint } from '../metadata/image.js';
import { supportedFeatureRanges } from '../metadata/features.js';
import { randomUuid } from '../metadata/meta-properties.js';
import type { ControllerChannel } from './controller-channel.js';

export interface BrokerLifecycleOptions {
  nodeId: number;
  clusterId: string;
  rack: string | null;
  random: Random;
  channel: ControllerChannel;
}

export class BrokerRegistrationError extends Error {
  override readonly name = 'BrokerRegistrationError';
}

export class BrokerLifecycleManager {
  private brokerEpochValue = -1;
  readonly incarnationId: string;

  constructor(private readonly options: BrokerLifecycleOptions) {
    this.incarnationId = randomUuid(options.random);
  }

  /** This broker's epoch from its registration, -1 before. */
  get brokerEpoch(): number {
    return this.brokerEpochValue;
  }

  async register(registration: { listeners: readonly BrokerEndpoint[]; logDirIds: readonly string[] }): Promise<void> {
    const response = await this.options.channel.send(BrokerRegistration, {
      brokerId: this.options.nodeId,
      clusterId: this.options.clusterId,
      incarnationId: this.incarnationId,
      listeners: [...registration.listeners],
      features: supportedFeatureRanges(),
      rack: this.options.rack,
      isMigratingZkBroker: false,
      logDirs: [...registration.logDirIds],
    });
    if (response.errorCode !== ErrorCode.NONE) throw new BrokerRegistrationError(`broker registration failed: ${errorInfo(response.errorCode).name}`);
    this.brokerEpochValue = response.brokerEpoch;
  }

  /** Once caught up with the metadata log at `metadataOffset`: asks the controller to unfence this broker. */
  async unfence(metadataOffset: number): Promise<void> {
    const response = await this.options.channel.send(BrokerHeartbeat, {
      brokerId: this.options.nodeId,
      brokerEpoch: this.brokerEpochValue,
      currentMetadataOffset: metadataOffset,
      wantFence: false,
      wantShutDown: false,
    });
    if (response.errorCode !== ErrorCode.NONE) throw new BrokerRegistrationError(`unfencing failed: ${errorInfo(response.errorCode).name}`);
    if (response.isFenced) throw new BrokerRegistrationError(`broker ${this.options.nodeId} is still fenced`);
  }
}
