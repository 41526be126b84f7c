/**
 * Builds metadata images by replaying records (Kafka's MetadataDelta): start
 * from an image, replay committed records in log order, then `build()` the
 * next image and the delta publishers react to. The same replay code runs on
 * a live commit, on restart (log replay) and when loading a snapshot, so all
 * three reach the same state.
 *
 * Images are immutable: a builder copies a map the first time it changes it.
 * A record that does not apply (a partition of an unknown topic, a change to
 * an unknown broker) is a broken invariant of the metadata log and throws.
 */
import type { StandardAcl } from '../security/authorizer/acl.js';
import type {
  BrokerRegistrationImage,
  ControllerRegistrationImage,
  MetadataDelta,
  MetadataImage,
  PartitionRegistration,
  ScramCredential,
  TopicImage,
} from './image.js';
import { NO_LEADER_CHANGE, type MetadataRecord, type RecordData } from './records.js';
import { topicPartitionKey } from '../protocol/topic-partition.js';
import { applyClientQuota, type ClientQuotaImage } from './client-quotas.js';

/** ConfigResource types of ConfigRecord (Kafka's ConfigResource.Type). */
export const ConfigResourceType = {
  UNKNOWN: 0,
  TOPIC: 2,
  BROKER: 4,
  BROKER_LOGGER: 8,
  CLIENT_METRICS: 16,
  GROUP: 32,
} as const;

export class MetadataReplayError extends Error {
  override readonly name = 'MetadataReplayError';
}

export function emptyImage(clusterId: string): MetadataImage {
  return {
    offset: -1,
    clusterId,
    topicsByName: new Map(),
    topicsById: new Map(),
    brokers: new Map(),
    features: new Map(),
    brokerConfigs: new Map(),
    groupConfigs: new Map(),
    controllers: new Map(),
    nextProducerId: 0,
    scramCredentials: new Map(),
    acls: new Map(),
    clientQuotas: new Map(),
  };
}

interface MutableTopic {
  name: string;
  id: string;
  partitions: Map<number, PartitionRegistration>;
}

export class ImageBuilder {
  private offset: number;
  private topics: Map<string, MutableTopic | TopicImage> | null = null;
  private readonly copiedTopics = new Set<string>();
  /** Topic config sets changed by this delta, by topic name (null: removed with the topic). */
  private readonly topicConfigChanges = new Map<string, ReadonlyMap<string, string> | null>();
  private brokers: Map<number, BrokerRegistrationImage> | null = null;
  private controllers: Map<number, ControllerRegistrationImage> | null = null;
  private features: Map<string, number> | null = null;
  private brokerConfigs: Map<string, ReadonlyMap<string, string>> | null = null;
  private groupConfigs: Map<string, ReadonlyMap<string, string>> | null = null;
  private nextProducerId: number;
  private scramCredentials: Map<string, ReadonlyMap<number, ScramCredential>> | null = null;
  private acls: Map<string, StandardAcl> | null = null;
  private clientQuotas: Map<string, ClientQuotaImage> | null = null;
  private readonly changedPartitions = new Map<string, PartitionRegistration>();
  private readonly deletedTopics = new Map<string, TopicImage>();
  private readonly createdTopicIds = new Set<string>();
  private readonly configChangedTopics = new Set<string>();
  private readonly changedFeatures = new Map<string, number>();
  private brokersChanged = false;

  constructor(private readonly base: MetadataImage) {
    this.offset = base.offset;
    this.nextProducerId = base.nextProducerId;
  }

  get lastOffset(): number {
    return this.offset;
  }

  /**
   * Applies one committed record found at `offset`. Snapshot records have no
   * offset of their own: they are replayed without one, then `advanceTo`
   * moves the image to the snapshot's last offset.
   */
  replay(record: MetadataRecord, offset?: number): void {
    if (offset !== undefined) {
      if (offset <= this.offset) throw new MetadataReplayError(`record at offset ${offset} replayed after offset ${this.offset}`);
      this.offset = offset;
    }
    switch (record.type) {
      case 'TopicRecord':
        return this.replayTopic(record.data);
      case 'PartitionRecord':
        return this.replayPartition(record.data);
      case 'PartitionChangeRecord':
        return this.replayPartitionChange(record.data);
      case 'RemoveTopicRecord':
        return this.replayRemoveTopic(record.data.topicId);
      case 'ConfigRecord':
        return this.replayConfig(record.data);
      case 'RegisterBrokerRecord':
        return this.replayRegisterBroker(record.data);
      case 'UnregisterBrokerRecord':
        return this.replayUnregisterBroker(record.data);
      case 'FenceBrokerRecord':
        return this.changeBroker(record.data.id, record.data.epoch, { fenced: true });
      case 'UnfenceBrokerRecord':
        return this.changeBroker(record.data.id, record.data.epoch, { fenced: false });
      case 'BrokerRegistrationChangeRecord':
        return this.replayBrokerChange(record.data);
      case 'FeatureLevelRecord':
        return this.replayFeatureLevel(record.data);
      case 'ProducerIdsRecord':
        this.nextProducerId = record.data.nextProducerId;
        return;
      case 'RegisterControllerRecord':
        return this.replayRegisterController(record.data);
      case 'UserScramCredentialRecord':
        return this.replayScramCredential(record.data);
      case 'RemoveUserScramCredentialRecord':
        return this.replayRemoveScramCredential(record.data);
      case 'AccessControlEntryRecord':
        return this.replayAccessControlEntry(record.data);
      case 'ClientQuotaRecord':
        this.clientQuotas ??= new Map(this.base.clientQuotas);
        return applyClientQuota(this.clientQuotas, record.data);
      case 'RemoveAccessControlEntryRecord':
        return this.replayRemoveAccessControlEntry(record.data.id);
      case 'NoOpRecord':
        return;
    }
  }

  /** Moves the image offset past records that carry no metadata (control records, empty batches). */
  advanceTo(offset: number): void {
    if (offset > this.offset) this.offset = offset;
  }

  private topicMap(): Map<string, MutableTopic | TopicImage> {
    this.topics ??= new Map(this.base.topicsById);
    return this.topics;
  }

  private topicById(topicId: string): MutableTopic | TopicImage | undefined {
    return (this.topics ?? this.base.topicsById).get(topicId);
  }

  /** The topic, copied so that its partitions can change. */
  private mutableTopic(topicId: string, what: string): MutableTopic {
    const topic = this.topicById(topicId);
    if (topic === undefined) throw new MetadataReplayError(`${what} for unknown topic id ${topicId}`);
    if (this.copiedTopics.has(topicId)) return topic as MutableTopic;
    const copy: MutableTopic = { name: topic.name, id: topic.id, partitions: new Map(topic.partitions) };
    this.topicMap().set(topicId, copy);
    this.copiedTopics.add(topicId);
    return copy;
  }

  private replayTopic(data: RecordData<'TopicRecord'>): void {
    if (this.topicById(data.topicId) !== undefined) throw new MetadataReplayError(`topic id ${data.topicId} registered twice`);
    this.topicMap().set(data.topicId, { name: data.name, id: data.topicId, partitions: new Map() });
    this.copiedTopics.add(data.topicId);
    this.createdTopicIds.add(data.topicId);
  }

  private replayPartition(data: RecordData<'PartitionRecord'>): void {
    const topic = this.mutableTopic(data.topicId, `PartitionRecord ${data.partitionId}`);
    const registration: PartitionRegistration = {
      topicId: topic.id,
      topicName: topic.name,
      partition: data.partitionId,
      replicas: data.replicas,
      isr: data.isr,
      elr: data.eligibleLeaderReplicas ?? [],
      lastKnownElr: data.lastKnownElr ?? [],
      removingReplicas: data.removingReplicas,
      addingReplicas: data.addingReplicas,
      leader: data.leader,
      ...leaderRecoveryState(data.leaderRecoveryState),
      leaderEpoch: data.leaderEpoch,
      partitionEpoch: data.partitionEpoch,
      directories: data.directories,
    };
    topic.partitions.set(data.partitionId, registration);
    this.changedPartitions.set(topicPartitionKey({ topic: topic.id, partition: data.partitionId }), registration);
  }

  private replayPartitionChange(data: RecordData<'PartitionChangeRecord'>): void {
    const topic = this.mutableTopic(data.topicId, `PartitionChangeRecord ${data.partitionId}`);
    const previous = topic.partitions.get(data.partitionId);
    if (previous === undefined) throw new MetadataReplayError(`PartitionChangeRecord for unknown partition ${topic.name}-${data.partitionId}`);
    const leaderChanged = data.leader !== NO_LEADER_CHANGE;
    const { leaderRecoveryState: previousRecoveryState, ...unchanged } = previous;
    const registration: PartitionRegistration = {
      ...unchanged,
      replicas: data.replicas ?? previous.replicas,
      isr: data.isr ?? previous.isr,
      elr: data.eligibleLeaderReplicas ?? previous.elr,
      lastKnownElr: data.lastKnownElr ?? previous.lastKnownElr,
      removingReplicas: data.removingReplicas ?? previous.removingReplicas,
      addingReplicas: data.addingReplicas ?? previous.addingReplicas,
      leader: leaderChanged ? data.leader : previous.leader,
      ...leaderRecoveryState(data.leaderRecoveryState === -1 ? (previousRecoveryState ?? 0) : data.leaderRecoveryState),
      // Kafka bumps the leader epoch whenever the record names a leader, even the same one.
      leaderEpoch: leaderChanged ? previous.leaderEpoch + 1 : previous.leaderEpoch,
      partitionEpoch: previous.partitionEpoch + 1,
      directories: data.directories ?? previous.directories ?? [],
    };
    topic.partitions.set(data.partitionId, registration);
    this.changedPartitions.set(topicPartitionKey({ topic: topic.id, partition: data.partitionId }), registration);
  }

  private replayRemoveTopic(topicId: string): void {
    const topic = this.topicById(topicId);
    if (topic === undefined) throw new MetadataReplayError(`RemoveTopicRecord for unknown topic id ${topicId}`);
    this.topicMap().delete(topicId);
    this.copiedTopics.delete(topicId);
    for (const partition of topic.partitions.keys()) this.changedPartitions.delete(topicPartitionKey({ topic: topicId, partition }));
    this.topicConfigChanges.set(topic.name, null);
    this.configChangedTopics.delete(topic.name);
    const baseTopic = this.base.topicsById.get(topicId);
    if (baseTopic !== undefined) this.deletedTopics.set(topicId, baseTopic);
    this.createdTopicIds.delete(topicId);
  }

  private replayConfig(data: RecordData<'ConfigRecord'>): void {
    if (data.resourceType === ConfigResourceType.TOPIC) {
      this.topicConfigChanges.set(data.resourceName, withValue(this.topicConfigsOf(data.resourceName), data.name, data.value));
      this.configChangedTopics.add(data.resourceName);
      return;
    }
    if (data.resourceType === ConfigResourceType.BROKER) {
      this.brokerConfigs ??= new Map(this.base.brokerConfigs);
      this.brokerConfigs.set(data.resourceName, withValue(this.brokerConfigs.get(data.resourceName), data.name, data.value));
      this.brokersChanged = true;
      return;
    }
    if (data.resourceType === ConfigResourceType.GROUP) return this.replayGroupConfig(data);
    // Client-metrics configs have no consumer in Spool yet; they stay in the log.
  }

  /** A group's configs; a group whose last config is deleted leaves the map (Kafka's GroupConfigManager drops it too). */
  private replayGroupConfig(data: RecordData<'ConfigRecord'>): void {
    this.groupConfigs ??= new Map(this.base.groupConfigs);
    const next = withValue(this.groupConfigs.get(data.resourceName), data.name, data.value);
    if (next.size === 0) this.groupConfigs.delete(data.resourceName);
    else this.groupConfigs.set(data.resourceName, next);
  }

  /** A topic's current config overrides, as changed so far by this delta. */
  private topicConfigsOf(name: string): ReadonlyMap<string, string> | undefined {
    if (this.topicConfigChanges.has(name)) return this.topicConfigChanges.get(name) ?? undefined;
    return this.base.topicsByName.get(name)?.configs;
  }

  private brokerMap(): Map<number, BrokerRegistrationImage> {
    this.brokers ??= new Map(this.base.brokers);
    this.brokersChanged = true;
    return this.brokers;
  }

  private replayRegisterBroker(data: RecordData<'RegisterBrokerRecord'>): void {
    this.brokerMap().set(data.brokerId, {
      id: data.brokerId,
      epoch: data.brokerEpoch,
      incarnationId: data.incarnationId,
      listeners: data.endPoints.map((e) => ({ name: e.name, host: e.host, port: e.port, securityProtocol: e.securityProtocol })),
      rack: data.rack,
      fenced: data.fenced,
      inControlledShutdown: data.inControlledShutdown,
      logDirs: data.logDirs,
      supportedFeatures: new Map(data.features.map((f) => [f.name, { minVersion: f.minSupportedVersion, maxVersion: f.maxSupportedVersion }])),
    });
  }

  private replayUnregisterBroker(data: RecordData<'UnregisterBrokerRecord'>): void {
    const brokers = this.brokerMap();
    const existing = brokers.get(data.brokerId);
    if (existing === undefined) throw new MetadataReplayError(`UnregisterBrokerRecord for unknown broker ${data.brokerId}`);
    brokers.delete(data.brokerId);
  }

  private changeBroker(brokerId: number, epoch: number, change: globalThis.Partial<BrokerRegistrationImage>): void {
    const brokers = this.brokerMap();
    const existing = brokers.get(brokerId);
    if (existing === undefined) throw new MetadataReplayError(`registration change for unknown broker ${brokerId}`);
    if (existing.epoch !== epoch) throw new MetadataReplayError(`registration change for broker ${brokerId} epoch ${epoch}, registered epoch ${existing.epoch}`);
    brokers.set(brokerId, { ...existing, ...change });
  }

  private replayBrokerChange(data: RecordData<'BrokerRegistrationChangeRecord'>): void {
    const change: globalThis.Partial<BrokerRegistrationImage> = {};
    if (data.fenced !== 0) change.fenced = data.fenced > 0;
    if (data.inControlledShutdown === 1) change.inControlledShutdown = true;
    if (data.logDirs.length > 0) change.logDirs = data.logDirs;
    this.changeBroker(data.brokerId, data.brokerEpoch, change);
  }

  private replayFeatureLevel(data: RecordData<'FeatureLevelRecord'>): void {
    this.features ??= new Map(this.base.features);
    if (data.featureLevel === 0) this.features.delete(data.name);
    else this.features.set(data.name, data.featureLevel);
    this.changedFeatures.set(data.name, data.featureLevel);
  }

  private replayRegisterController(data: RecordData<'RegisterControllerRecord'>): void {
    this.controllers ??= new Map(this.base.controllers);
    this.controllers.set(data.controllerId, {
      id: data.controllerId,
      incarnationId: data.incarnationId,
      listeners: data.endPoints.map((e) => ({ name: e.name, host: e.host, port: e.port, securityProtocol: e.securityProtocol })),
      supportedFeatures: new Map(data.features.map((f) => [f.name, { minVersion: f.minSupportedVersion, maxVersion: f.maxSupportedVersion }])),
    });
  }

  private replayScramCredential(data: RecordData<'UserScramCredentialRecord'>): void {
    this.scramCredentials ??= new Map(this.base.scramCredentials);
    const { salt, storedKey, serverKey, iterations } = data;
    this.scramCredentials.set(data.name, new Map(this.scramCredentials.get(data.name)).set(data.mechanism, { salt, storedKey, serverKey, iterations }));
  }

  private replayRemoveScramCredential(data: RecordData<'RemoveUserScramCredentialRecord'>): void {
    this.scramCredentials ??= new Map(this.base.scramCredentials);
    const remaining = new Map(this.scramCredentials.get(data.name));
    if (!remaining.delete(data.mechanism)) throw new MetadataReplayError(`RemoveUserScramCredentialRecord for unknown credential ${data.name} (mechanism ${data.mechanism})`);
    if (remaining.size === 0) this.scramCredentials.delete(data.name);
    else this.scramCredentials.set(data.name, remaining);
  }

  private replayAccessControlEntry(data: RecordData<'AccessControlEntryRecord'>): void {
    this.acls ??= new Map(this.base.acls);
    const { id, ...acl } = data;
    this.acls.set(id, acl);
  }

  private replayRemoveAccessControlEntry(id: string): void {
    this.acls ??= new Map(this.base.acls);
    if (!this.acls.delete(id)) throw new MetadataReplayError(`RemoveAccessControlEntryRecord for unknown ACL ${id}`);
  }

  /** The image after every replayed record, and what changed since the base image. */
  build(): { image: MetadataImage; delta: MetadataDelta } {
    const { topicsById, topicsByName, changedConfigs } = this.buildTopics();
    const image: MetadataImage = {
      offset: this.offset,
      clusterId: this.base.clusterId,
      topicsById,
      topicsByName,
      brokers: this.brokers ?? this.base.brokers,
      features: this.features ?? this.base.features,
      brokerConfigs: this.brokerConfigs ?? this.base.brokerConfigs,
      groupConfigs: this.groupConfigs ?? this.base.groupConfigs,
      controllers: this.controllers ?? this.base.controllers,
      nextProducerId: this.nextProducerId,
      scramCredentials: this.scramCredentials ?? this.base.scramCredentials,
      acls: this.acls ?? this.base.acls,
      clientQuotas: this.clientQuotas ?? this.base.clientQuotas,
    };
    const delta: MetadataDelta = {
      changedPartitions: [...this.changedPartitions.values()],
      deletedTopics: [...this.deletedTopics.values()],
      changedTopicConfigs: changedConfigs,
      brokersChanged: this.brokersChanged,
      changedFeatures: this.changedFeatures,
      offset: this.offset,
    };
    return { image, delta };
  }

  private buildTopics(): { topicsById: Map<string, TopicImage>; topicsByName: Map<string, TopicImage>; changedConfigs: TopicImage[] } {
    if (this.topics === null && this.configChangedTopics.size === 0) {
      return { topicsById: this.base.topicsById as Map<string, TopicImage>, topicsByName: this.base.topicsByName as Map<string, TopicImage>, changedConfigs: [] };
    }
    const topicsById = new Map<string, TopicImage>();
    const topicsByName = new Map<string, TopicImage>();
    const changedConfigs: TopicImage[] = [];
    for (const [id, topic] of this.topics ?? this.base.topicsById) {
      const configs = this.topicConfigsOf(topic.name) ?? EMPTY_CONFIGS;
      const unchanged = !this.copiedTopics.has(id) && configs === (topic as TopicImage).configs;
      const built: TopicImage = unchanged ? (topic as TopicImage) : { name: topic.name, id, partitions: topic.partitions, configs };
      topicsById.set(id, built);
      topicsByName.set(built.name, built);
      if (this.configChangedTopics.has(built.name) && !this.createdTopicIds.has(id)) changedConfigs.push(built);
    }
    return { topicsById, topicsByName, changedConfigs };
  }
}

const EMPTY_CONFIGS: ReadonlyMap<string, string> = new Map();

function withValue(current: ReadonlyMap<string, string> | undefined, name: string, value: string | null): ReadonlyMap<string, string> {
  const next = new Map(current ?? EMPTY_CONFIGS);
  if (value === null) next.delete(name);
  else next.set(name, value);
  return next;
}

/**
 * The delta that takes an empty image to `image`: every partition changed,
 * every broker changed. Published once at startup, so publishers see the
 * whole cluster the same way they see later changes.
 */
export function fullDelta(image: MetadataImage): MetadataDelta {
  return {
    changedPartitions: [...image.topicsById.values()].flatMap((topic) => [...topic.partitions.values()]),
    deletedTopics: [],
    changedTopicConfigs: [],
    brokersChanged: true,
    changedFeatures: new Map(image.features),
    offset: image.offset,
  };
}

/** A registration's leader recovery state: kept only while RECOVERING (absent means RECOVERED). */
function leaderRecoveryState(state: number): { leaderRecoveryState?: number } {
  return state === 0 ? {} : { leaderRecoveryState: state };
}

/** Applies records to an image in one step (tests, snapshot loading). */
export function applyRecords(image: MetadataImage, records: readonly { record: MetadataRecord; offset: number }[]): { image: MetadataImage; delta: MetadataDelta } {
  const builder = new ImageBuilder(image);
  for (const { record, offset } of records) builder.replay(record, offset);
  return builder.build();
}

/** A committed batch as replay needs it: data records at consecutive offsets from baseOffset. */
export interface ReplayBatch {
  baseOffset: number;
  lastOffset: number;
  records: readonly MetadataRecord[];
}

/** Replays one committed batch (control batches only move the offset). */
export function replayBatch(image: MetadataImage, batch: ReplayBatch): { image: MetadataImage; delta: MetadataDelta } {
  const builder = new ImageBuilder(image);
  batch.records.forEach((record, index) => builder.replay(record, batch.baseOffset + index));
  builder.advanceTo(batch.lastOffset);
  return builder.build();
}

/** Replays records at their own offsets (part of a batch, or a metadata transaction spanning batches), then moves to `lastOffset`. */
export function replayRecords(image: MetadataImage, records: readonly { record: MetadataRecord; offset: number }[], lastOffset: number): { image: MetadataImage; delta: MetadataDelta } {
  const builder = new ImageBuilder(image);
  for (const { record, offset } of records) builder.replay(record, offset);
  builder.advanceTo(lastOffset);
  return builder.build();
}

/** The image a snapshot holds: its records replayed on an empty image, at the snapshot's last offset. */
export function imageFromSnapshot(clusterId: string, snapshot: { endOffset: number; records: readonly MetadataRecord[] }): MetadataImage {
  const builder = new ImageBuilder(emptyImage(clusterId));
  for (const record of snapshot.records) builder.replay(record);
  builder.advanceTo(snapshot.endOffset - 1);
  return builder.build().image;
}
