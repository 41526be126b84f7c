// Captures Kafka's own results (kafka-clients 4.4.0) for test/client/group-assignors.test.ts:
// range, roundrobin and cooperative-sticky assignments of seeded random groups (several
// rebalance rounds for cooperative-sticky, each round's owned partitions and generations
// from the last), plus ConsumerProtocol subscription/assignment bytes. One JSON object a line.
// Regenerate: test/client/java/goldens.sh (writes test/client/fixtures/assignor-goldens.jsonl).
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.TopicPartition;

import java.nio.ByteBuffer;
import java.util.*;

public class AssignorGoldens {
    static final Random random = new Random(20240601L);

    static String memberId() {
        return "consumer-" + Long.toHexString(random.nextLong() & 0xffffffffffL) + "-" + random.nextInt(1000);
    }

    static String json(String s) { return s == null ? "null" : "\"" + s + "\""; }

    static String tps(Collection<TopicPartition> list) {
        StringBuilder b = new StringBuilder("[");
        for (TopicPartition tp : list) { if (b.length() > 1) b.append(','); b.append("[").append(json(tp.topic())).append(',').append(tp.partition()).append(']'); }
        return b.append(']').toString();
    }

    static class Member { String id; String instanceId; List<String> topics; List<TopicPartition> owned = new ArrayList<>(); int generation = -1; }

    static void emit(String assignor, Map<String, Integer> partitions, List<Member> members, Map<String, List<TopicPartition>> result) {
        StringBuilder b = new StringBuilder();
        b.append("{\"kind\":\"assign\",\"assignor\":").append(json(assignor)).append(",\"partitionsPerTopic\":{");
        boolean first = true;
        for (Map.Entry<String, Integer> e : partitions.entrySet()) { if (!first) b.append(','); first = false; b.append(json(e.getKey())).append(':').append(e.getValue()); }
        b.append("},\"members\":[");
        first = true;
        for (Member m : members) {
            if (!first) b.append(','); first = false;
            b.append("{\"memberId\":").append(json(m.id)).append(",\"groupInstanceId\":").append(json(m.instanceId)).append(",\"topics\":[");
            for (int i = 0; i < m.topics.size(); i++) { if (i > 0) b.append(','); b.append(json(m.topics.get(i))); }
            b.append("],\"ownedPartitions\":").append(tps(m.owned)).append(",\"generationId\":").append(m.generation).append('}');
        }
        b.append("],\"result\":{");
        first = true;
        for (Member m : members) { if (!first) b.append(','); first = false; b.append(json(m.id)).append(':').append(tps(result.get(m.id))); }
        System.out.println(b.append("}}"));
    }

    /** Only the topics some member subscribes to, as AbstractPartitionAssignor passes them. */
    static Map<String, Integer> subscribed(Map<String, Integer> partitions, List<Member> members) {
        Map<String, Integer> out = new HashMap<>();
        for (Member m : members) for (String t : m.topics) out.put(t, partitions.get(t));
        return out;
    }

    static Map<String, Subscription> subscriptions(List<Member> members, boolean withOwned) {
        Map<String, Subscription> subs = new HashMap<>();
        for (Member m : members) {
            Subscription s = withOwned ? new Subscription(m.topics, null, m.owned, m.generation, Optional.empty()) : new Subscription(m.topics);
            s.setGroupInstanceId(Optional.ofNullable(m.instanceId));
            subs.put(m.id, s);
        }
        return subs;
    }

    static Map<String, Integer> randomTopics() {
        Map<String, Integer> partitions = new HashMap<>();
        int topics = 1 + random.nextInt(4);
        for (int t = 0; t < topics; t++) partitions.put("topic-" + (char) ('a' + t) + random.nextInt(10), 1 + random.nextInt(8));
        return partitions;
    }

    static List<String> randomSubscription(List<String> all, boolean equal) {
        if (equal) return new ArrayList<>(all);
        List<String> out = new ArrayList<>();
        for (String t : all) if (random.nextBoolean()) out.add(t);
        if (out.isEmpty()) out.add(all.get(random.nextInt(all.size())));
        return out;
    }

    static Member newMember(List<String> topics, boolean isStatic) {
        Member m = new Member();
        m.id = memberId();
        m.instanceId = isStatic ? "instance-" + random.nextInt(100) : null;
        m.topics = topics;
        return m;
    }

    static void eager(String name, int cases) {
        for (int c = 0; c < cases; c++) {
            Map<String, Integer> partitions = randomTopics();
            List<String> all = new ArrayList<>(partitions.keySet());
            boolean equal = random.nextBoolean();
            List<Member> members = new ArrayList<>();
            int count = 1 + random.nextInt(6);
            Set<String> instances = new HashSet<>();
            for (int i = 0; i < count; i++) {
                Member m = newMember(randomSubscription(all, equal), random.nextInt(3) == 0);
                if (m.instanceId != null && !instances.add(m.instanceId)) m.instanceId = null;
                members.add(m);
            }
            Map<String, Integer> topics = subscribed(partitions, members);
            Map<String, List<TopicPartition>> result = name.equals("range")
                ? new RangeAssignor().assign(topics, subscriptions(members, false))
                : new RoundRobinAssignor().assign(topics, subscriptions(members, false));
            emit(name, topics, members, result);
        }
    }

    /** Several rounds: each round owned = last round's assignment, generation = round; members come, go, resubscribe. */
    static void cooperative(int sequences) {
        for (int s = 0; s < sequences; s++) {
            Map<String, Integer> partitions = randomTopics();
            List<String> all = new ArrayList<>(partitions.keySet());
            boolean equal = random.nextInt(3) > 0;
            List<Member> members = new ArrayList<>();
            int count = 1 + random.nextInt(5);
            for (int i = 0; i < count; i++) members.add(newMember(randomSubscription(all, equal), false));
            for (int round = 1; round <= 5; round++) {
                Map<String, Integer> topics = subscribed(partitions, members);
                Map<String, List<TopicPartition>> result = new CooperativeStickyAssignor().assign(topics, subscriptions(members, true));
                emit("cooperative-sticky", topics, members, result);
                for (Member m : members) { m.owned = new ArrayList<>(result.get(m.id)); m.generation = round; }
                int change = random.nextInt(5);
                if (change == 0 && members.size() > 1) members.remove(random.nextInt(members.size()));
                else if (change == 1) members.add(random.nextInt(members.size() + 1), newMember(randomSubscription(all, equal), false));
                else if (change == 2 && !equal) members.get(random.nextInt(members.size())).topics = randomSubscription(all, false);
                else if (change == 3) { String t = all.get(random.nextInt(all.size())); partitions.put(t, partitions.get(t) + 1 + random.nextInt(3)); }
                else if (change == 4 && members.size() > 1) members.get(random.nextInt(members.size())).generation = round - 1;
            }
        }
    }

    /** Members keep joining a group over uneven partition counts: which members keep an extra partition depends on HashMap order. */
    static void cooperativeJoins(int sequences) {
        for (int s = 0; s < sequences; s++) {
            Map<String, Integer> partitions = new HashMap<>();
            partitions.put("joins-" + s, 7 + random.nextInt(17));
            List<String> all = new ArrayList<>(partitions.keySet());
            List<Member> members = new ArrayList<>();
            for (int i = 0; i < 2 + random.nextInt(3); i++) members.add(newMember(all, false));
            for (int round = 1; round <= 4; round++) {
                Map<String, List<TopicPartition>> result = new CooperativeStickyAssignor().assign(partitions, subscriptions(members, true));
                emit("cooperative-sticky", partitions, members, result);
                for (Member m : members) { m.owned = new ArrayList<>(result.get(m.id)); m.generation = round; }
                if (round % 2 == 0) members.add(random.nextInt(members.size() + 1), newMember(all, false));
            }
        }
    }

    static String base64(ByteBuffer buffer) {
        byte[] bytes = new byte[buffer.remaining()];
        buffer.duplicate().get(bytes);
        return Base64.getEncoder().encodeToString(bytes);
    }

    static void protocol() {
        List<TopicPartition> owned = List.of(new TopicPartition("orders", 0), new TopicPartition("orders", 2), new TopicPartition("payments", 1));
        ByteBuffer userData = ByteBuffer.wrap(new byte[]{0, 0, 0, 7});
        Subscription sub = new Subscription(List.of("orders", "payments"), userData, owned, 7, Optional.of("rack-1"));
        for (short v = 0; v <= 3; v++) {
            System.out.println("{\"kind\":\"subscription\",\"version\":" + v + ",\"topics\":[\"orders\",\"payments\"],\"userData\":\"AAAABw==\",\"ownedPartitions\":" + tps(owned)
                + ",\"generationId\":7,\"rackId\":\"rack-1\",\"bytes\":\"" + base64(ConsumerProtocol.serializeSubscription(sub, v)) + "\"}");
        }
        Subscription plain = new Subscription(List.of("t"));
        System.out.println("{\"kind\":\"subscription\",\"version\":3,\"topics\":[\"t\"],\"userData\":null,\"ownedPartitions\":[],\"generationId\":-1,\"rackId\":null,\"bytes\":\""
            + base64(ConsumerProtocol.serializeSubscription(plain, (short) 3)) + "\"}");
        Assignment assignment = new Assignment(owned, null);
        for (short v = 0; v <= 3; v++) {
            System.out.println("{\"kind\":\"assignment\",\"version\":" + v + ",\"assignedPartitions\":" + tps(owned) + ",\"userData\":null,\"bytes\":\""
                + base64(ConsumerProtocol.serializeAssignment(assignment, v)) + "\"}");
        }
    }

    public static void main(String[] args) {
        protocol();
        eager("range", 40);
        eager("roundrobin", 40);
        cooperative(60);
        cooperativeJoins(30);
    }
}
