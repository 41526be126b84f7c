/**
 * Kafka's KRaft controller gauges (kafka.controller:type=KafkaController),
 * on nodes with the controller role, read at each scrape:
 * ActiveControllerCount (1 on the Raft leader), and from the metadata image
 * as Kafka's ControllerMetadataMetricsPublisher derives them on every
 * controller: GlobalTopicCount, GlobalPartitionCount,
 * OfflinePartitionsCount (no leader), PreferredReplicaImbalanceCount
 * (leader is not the first replica), ActiveBrokerCount and
 * FencedBrokerCount → `kafka_controller_kafkacontroller_<name>`.
 */
import type { Registry } from 'prom-client';
import { ValueGauge } from './exposition.js';
import type { MetadataImage } from '../metadata/image.js';

export interface ControllerMetricsSources {
  image(): MetadataImage;
  /** True while this node is the active controller (the metadata quorum's leader). */
  isActive(): boolean;
}

const NAMES = ['activecontrollercount', 'globaltopiccount', 'globalpartitioncount', 'offlinepartitionscount', 'preferredreplicaimbalancecount', 'activebrokercount', 'fencedbrokercount'] as const;
type Name = (typeof NAMES)[number];

export class ControllerMetrics {
  private readonly gauges = new Map<Name, ValueGauge>();

  constructor(
    registry: Registry,
    private readonly sources: ControllerMetricsSources,
  ) {
    for (const name of NAMES) this.gauges.set(name, new ValueGauge(registry, { name: `kafka_controller_kafkacontroller_${name}`, help: `KafkaController ${name}` }));
  }

  refresh(): void {
    const image = this.sources.image();
    const values: Record<Name, number> = { activecontrollercount: this.sources.isActive() ? 1 : 0, globaltopiccount: image.topicsByName.size, globalpartitioncount: 0, offlinepartitionscount: 0, preferredreplicaimbalancecount: 0, activebrokercount: 0, fencedbrokercount: 0 };
    for (const topic of image.topicsByName.values()) {
      for (const partition of topic.partitions.values()) {
        values.globalpartitioncount++;
        if (partition.leader < 0) values.offlinepartitionscount++;
        else if (partition.leader !== partition.replicas[0]) values.preferredreplicaimbalancecount++;
      }
    }
    for (const broker of image.brokers.values()) {
      if (broker.fenced) values.fencedbrokercount++;
      else values.activebrokercount++;
    }
    for (const name of NAMES) this.gauges.get(name)!.set(values[name]);
  }
}
