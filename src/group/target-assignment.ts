/**
 * Computes a consumer group's new target assignment for a group epoch and
 * the records that store it (Kafka's TargetAssignmentBuilder): one
 * ConsumerGroupTargetAssignmentMember record per member whose target
 * changed (a tombstone for members that left), then the
 * ConsumerGroupTargetAssignmentMetadata record with the new epoch.
 */
import type { MetadataImage } from '../metadata/image.js';
import type { PartitionAssignor, AssignmentMemberSpec } from './assignors.js';
import { assignmentToList, sameAssignment, type Assignment, type ConsumerGroup, type ConsumerGroupMember } from './consumer-group.js';
import { groupRecord, type GroupRecord } from './records.js';

export interface TargetAssignmentInput {
  group: ConsumerGroup;
  groupEpoch: number;
  assignor: PartitionAssignor;
  image: MetadataImage;
  /** A member added or changed by the current operation. */
  updatedMember: ConsumerGroupMember | null;
  /** Members leaving with the current operation (a replaced static member). */
  removedMemberIds: readonly string[];
  /** The topic names a member subscribes to, regexes resolved. */
  topicNamesOf: (member: ConsumerGroupMember) => Iterable<string>;
  nowMs: number;
}

export interface TargetAssignmentResult {
  records: GroupRecord[];
  assignments: ReadonlyMap<string, Assignment>;
}

export function buildTargetAssignment(input: TargetAssignmentInput): TargetAssignmentResult {
  const { group, image } = input;
  const members = new Map(group.members);
  for (const memberId of input.removedMemberIds) members.delete(memberId);
  if (input.updatedMember !== null) members.set(input.updatedMember.memberId, input.updatedMember);

  const partitionCounts = new Map<string, number>();
  const specs = new Map<string, AssignmentMemberSpec>();
  for (const member of members.values()) {
    const subscribedTopicIds = new Set<string>();
    for (const name of input.topicNamesOf(member)) {
      const topic = image.topicsByName.get(name);
      if (topic === undefined || topic.partitions.size === 0) continue;
      subscribedTopicIds.add(topic.id);
      partitionCounts.set(topic.id, topic.partitions.size);
    }
    specs.set(member.memberId, {
      instanceId: member.instanceId,
      rackId: member.rackId,
      subscribedTopicIds,
      assignment: group.targetAssignmentOf(member.memberId, member.instanceId),
    });
  }
  const assignments = input.assignor.assign({ members: specs, partitionCounts });

  const records: GroupRecord[] = [];
  for (const [memberId, assignment] of assignments) {
    const previous = group.targetAssignment.get(memberId);
    if (previous !== undefined && sameAssignment(previous, assignment)) continue;
    records.push(groupRecord('ConsumerGroupTargetAssignmentMember', { groupId: group.groupId, memberId }, { topicPartitions: assignmentToList(assignment) }));
  }
  for (const memberId of group.targetAssignment.keys()) {
    if (!members.has(memberId)) records.push(groupRecord('ConsumerGroupTargetAssignmentMember', { groupId: group.groupId, memberId }, null));
  }
  records.push(
    groupRecord('ConsumerGroupTargetAssignmentMetadata', { groupId: group.groupId }, { assignmentEpoch: input.groupEpoch, assignmentTimestamp: input.nowMs }),
  );
  return { records, assignments };
}
