/** Spool's client: producer, consumer (manual assignment or consumer groups) and admin, plus the pieces they share. */
export { Producer, PRODUCER_DEFAULTS, type ProducerOptions, type ProducerRecord, type RecordMetadata, type Acks } from './producer.js';
export { Consumer, CONSUMER_DEFAULTS, ASSIGNORS, type ConsumerOptions, type ConsumerRecord, type ConsumerGroupMetadata, type RebalanceListener, type OffsetAndMetadata, type OffsetToCommit } from './consumer.js';
export { Admin, ConfigResourceType, AlterConfigOp, type AdminOptions, type NewTopic, type CreatedTopic, type TopicDescription, type ConfigEntry, type ConfigResource, type ConfigAlteration, type OffsetSpecName, type ConsumerGroupDescription, type GroupListing, type ListGroupsOptions, type MemberDescription } from './admin.js';
export { RangeAssignor, RoundRobinAssignor, type PartitionAssignor, type MemberSubscription, type RebalanceProtocol } from './group-assignors.js';
export { CooperativeStickyAssignor } from './group-sticky-assignor.js';
export { Cluster, parseBootstrapServers, type ClientOptions, type TopicPartition, type BrokerInfo, type TopicInfo, type PartitionInfo } from './cluster.js';
export { BrokerConnection, CLIENT_SOFTWARE_NAME, CLIENT_SOFTWARE_VERSION, type ConnectionOptions } from './connection.js';
export { KafkaError, NetworkError, TimeoutError } from './errors.js';
export { murmur2, toPositive, partitionForKey, StickyPartitioner, type Partitioner } from './partitioner.js';
export { OffsetSpec, IsolationLevel, type IsolationLevelName, type ListedOffset } from './list-offsets.js';
