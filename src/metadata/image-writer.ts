/**
 * Writes a metadata image as the records that rebuild it (Kafka's
 * ImageWriter): the content of a `__cluster_metadata` snapshot. Replaying
 * the output on an empty image gives back the same image, which the
 * snapshot tests check.
 *
 * Order matters for readers: feature levels first (metadata.version decides
 * how later records are read), then brokers and controllers, then topics
 * with their partitions, then configs, then the producer-id block, then
 * SCRAM credentials, ACLs and client quotas.
 */
import type { MetadataImage, PartitionRegistration } from './image.js';
import { ConfigResourceType } from './delta.js';
import { ELR_RECORD_VERSION, metadataRecord, type MetadataRecord } from './records.js';
import { ZERO_UUID } from '../protocol/reader.js';
import { componentsOf } from './client-quotas.js';

export function imageToRecords(image: MetadataImage): MetadataRecord[] {
  const records: MetadataRecord[] = [];
  const features = [...image.features].sort(([a], [b]) => (a === 'metadata.version' ? -1 : b === 'metadata.version' ? 1 : a.localeCompare(b)));
  for (const [name, featureLevel] of features) records.push(metadataRecord('FeatureLevelRecord', { name, featureLevel }));
  for (const broker of image.brokers.values()) {
    records.push(
      metadataRecord('RegisterBrokerRecord', {
        brokerId: broker.id,
        incarnationId: broker.incarnationId,
        brokerEpoch: broker.epoch,
        endPoints: broker.listeners.map((l) => ({ name: l.name, host: l.host, port: l.port, securityProtocol: l.securityProtocol })),
        features: [...broker.supportedFeatures].map(([name, range]) => ({ name, minSupportedVersion: range.minVersion, maxSupportedVersion: range.maxVersion })),
        rack: broker.rack,
        fenced: broker.fenced,
        inControlledShutdown: broker.inControlledShutdown,
        logDirs: [...broker.logDirs],
      }),
    );
  }
  for (const controller of image.controllers.values()) {
    records.push(
      metadataRecord('RegisterControllerRecord', {
        controllerId: controller.id,
        incarnationId: controller.incarnationId,
        endPoints: controller.listeners.map((l) => ({ name: l.name, host: l.host, port: l.port, securityProtocol: l.securityProtocol })),
        features: [...controller.supportedFeatures].map(([name, range]) => ({ name, minSupportedVersion: range.minVersion, maxSupportedVersion: range.maxVersion })),
      }),
    );
  }
  for (const topic of image.topicsById.values()) {
    records.push(metadataRecord('TopicRecord', { name: topic.name, topicId: topic.id }));
    for (const partition of topic.partitions.values()) records.push(partitionRecord(partition));
  }
  for (const [resourceName, configs] of image.brokerConfigs) {
    for (const [name, value] of configs) records.push(metadataRecord('ConfigRecord', { resourceType: ConfigResourceType.BROKER, resourceName, name, value }));
  }
  for (const topic of image.topicsById.values()) {
    for (const [name, value] of topic.configs) records.push(metadataRecord('ConfigRecord', { resourceType: ConfigResourceType.TOPIC, resourceName: topic.name, name, value }));
  }
  for (const [resourceName, configs] of image.groupConfigs) {
    for (const [name, value] of configs) records.push(metadataRecord('ConfigRecord', { resourceType: ConfigResourceType.GROUP, resourceName, name, value }));
  }
  if (image.nextProducerId > 0) records.push(metadataRecord('ProducerIdsRecord', { brokerId: -1, brokerEpoch: -1, nextProducerId: image.nextProducerId }));
  for (const [name, byMechanism] of image.scramCredentials) {
    for (const [mechanism, credential] of byMechanism) records.push(metadataRecord('UserScramCredentialRecord', { name, mechanism, ...credential }));
  }
  for (const [id, acl] of image.acls) records.push(metadataRecord('AccessControlEntryRecord', { id, ...acl }));
  for (const { entity, quotas } of image.clientQuotas.values()) {
    for (const [key, value] of quotas) records.push(metadataRecord('ClientQuotaRecord', { entity: componentsOf(entity), key, value, remove: false }));
  }
  return records;
}

export function partitionRecord(partition: PartitionRegistration): MetadataRecord {
  const eligibleLeaders = partition.elr.length > 0 || partition.lastKnownElr.length > 0;
  const record = metadataRecord('PartitionRecord', {
    partitionId: partition.partition,
    topicId: partition.topicId,
    replicas: [...partition.replicas],
    isr: [...partition.isr],
    removingReplicas: [...partition.removingReplicas],
    addingReplicas: [...partition.addingReplicas],
    leader: partition.leader,
    leaderRecoveryState: partition.leaderRecoveryState ?? 0,
    leaderEpoch: partition.leaderEpoch,
    partitionEpoch: partition.partitionEpoch,
    directories: partition.directories !== undefined && partition.directories.length === partition.replicas.length
      ? [...partition.directories]
      : partition.replicas.map(() => ZERO_UUID),
    ...(eligibleLeaders ? { eligibleLeaderReplicas: [...partition.elr], lastKnownElr: [...partition.lastKnownElr] } : {}),
  });
  // ELR fields exist from PartitionRecord v2 (KIP-966).
  return eligibleLeaders ? { ...record, version: ELR_RECORD_VERSION } : record;
}
