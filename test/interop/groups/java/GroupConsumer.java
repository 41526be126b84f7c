/*
 * A group member for the group interop tests (test/interop/groups/), written
 * with the Apache Kafka Java consumer (kafka-clients 4.4.0, the jars that
 * test/interop/java-client/ci-setup.sh resolves).
 *
 *   GroupConsumer '<config json>'
 *
 * The config: bootstrap, group, topic, clientId, protocol (group.protocol:
 * classic or consumer), assignor (partition.assignment.strategy class for
 * classic: range, roundrobin, sticky, cooperative-sticky; group.remote.assignor
 * for consumer; null: the client's default), sessionTimeoutMs and
 * heartbeatIntervalMs (classic only: the consumer protocol takes them from
 * the broker); optionally security (a secured listener: protocol SASL_SSL
 * with SCRAM-SHA-512 username/password, or SSL with the client certificate's
 * certPath/keyPath as a PEM keystore; caPath, a PEM truststore, for both) and
 * produce (values the member produces with acks=all before it subscribes,
 * then prints "produced"). Auto-commit is off: after each poll the member prints one line
 * per record, then commits exactly those records (next offset per partition)
 * with commitSync. One JSON object per line (see group-scenario.ts): started,
 * assignment (the full set, whenever it changed), record, committed,
 * commitFailed, closed. SIGTERM wakes the poll, closes the consumer (leaving
 * the group) and exits 0.
 */
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public final class GroupConsumer {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Map<String, String> ASSIGNORS = Map.of(
            "range", RangeAssignor.class.getName(),
            "roundrobin", RoundRobinAssignor.class.getName(),
            "sticky", StickyAssignor.class.getName(),
            "cooperative-sticky", CooperativeStickyAssignor.class.getName());

    private static synchronized void emit(ObjectNode line) {
        System.out.println(line.toString());
        System.out.flush();
    }

    private static ObjectNode event(String name) {
        ObjectNode line = JSON.createObjectNode();
        line.put("event", name);
        return line;
    }

    /** The client's settings for a secured listener (none for PLAINTEXT), shared by the producer and the consumer. */
    private static Properties security(JsonNode config) throws Exception {
        Properties props = new Properties();
        JsonNode security = config.get("security");
        if (security == null || security.isNull()) return props;
        String protocol = security.get("protocol").asText();
        props.put("security.protocol", protocol);
        props.put("ssl.truststore.type", "PEM");
        props.put("ssl.truststore.location", security.get("caPath").asText());
        if (protocol.equals("SSL")) {
            props.put("ssl.keystore.type", "PEM");
            props.put("ssl.keystore.key", Files.readString(Path.of(security.get("keyPath").asText())));
            props.put("ssl.keystore.certificate.chain", Files.readString(Path.of(security.get("certPath").asText())));
        } else {
            props.put("sasl.mechanism", "SCRAM-SHA-512");
            props.put("sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required username=\""
                    + security.get("username").asText() + "\" password=\"" + security.get("password").asText() + "\";");
        }
        return props;
    }

    /** Produces the config's values (acks=all) and waits for every acknowledgement. */
    private static void produce(JsonNode config, String topic) throws Exception {
        Properties props = security(config);
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, config.get("bootstrap").asText());
        props.put(ProducerConfig.CLIENT_ID_CONFIG, config.get("clientId").asText());
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
            for (JsonNode value : config.get("produce")) producer.send(new ProducerRecord<>(topic, value.asText())).get();
        }
    }

    private static Properties properties(JsonNode config) throws Exception {
        Properties props = security(config);
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, config.get("bootstrap").asText());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, config.get("group").asText());
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, config.get("clientId").asText());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        String protocol = config.get("protocol").asText();
        props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        JsonNode assignor = config.get("assignor");
        boolean hasAssignor = assignor != null && !assignor.isNull();
        if (protocol.equals("classic")) {
            props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, config.get("sessionTimeoutMs").asInt());
            props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, config.get("heartbeatIntervalMs").asInt());
            if (hasAssignor) props.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, ASSIGNORS.get(assignor.asText()));
        } else if (hasAssignor) {
            props.put(ConsumerConfig.GROUP_REMOTE_ASSIGNOR_CONFIG, assignor.asText());
        }
        return props;
    }

    public static void main(String[] args) throws Exception {
        JsonNode config = JSON.readTree(args[args.length - 1]);
        String topic = config.get("topic").asText();
        JsonNode produce = config.get("produce");
        if (produce != null && !produce.isNull()) {
            produce(config, topic);
        }
        KafkaConsumer<String, String> consumer = new KafkaConsumer<>(properties(config), new StringDeserializer(), new StringDeserializer());
        CountDownLatch closed = new CountDownLatch(1);
        Thread main = Thread.currentThread();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            consumer.wakeup();
            try {
                closed.await();
            } catch (InterruptedException ignored) {
                main.interrupt();
            }
            // A JVM ended by SIGTERM exits 143; a clean close is reported as 0.
            Runtime.getRuntime().halt(0);
        }));
        emit(event("started").put("client", "kafka-clients " + org.apache.kafka.common.utils.internals.AppInfoParser.getVersion()));
        if (produce != null && !produce.isNull()) emit(event("produced").put("count", produce.size()));
        consumer.subscribe(List.of(topic));
        try {
            loop(consumer);
        } catch (WakeupException stopping) {
            // SIGTERM: leave the group below.
        } finally {
            consumer.close();
            emit(event("closed"));
            closed.countDown();
        }
    }

    private static void loop(KafkaConsumer<String, String> consumer) {
        TreeSet<Integer> shown = null;
        while (true) {
            ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
            TreeSet<Integer> assigned = new TreeSet<>();
            for (TopicPartition tp : consumer.assignment()) assigned.add(tp.partition());
            if (!assigned.equals(shown)) {
                shown = assigned;
                ObjectNode line = event("assignment");
                line.putPOJO("partitions", new ArrayList<>(assigned));
                emit(line);
            }
            if (records.isEmpty()) continue;
            Map<TopicPartition, OffsetAndMetadata> offsets = new TreeMap<>((a, b) -> Integer.compare(a.partition(), b.partition()));
            for (ConsumerRecord<String, String> record : records) {
                emit(event("record").put("partition", record.partition()).put("offset", record.offset()).put("value", record.value()));
                offsets.put(new TopicPartition(record.topic(), record.partition()), new OffsetAndMetadata(record.offset() + 1));
            }
            ObjectNode result;
            try {
                consumer.commitSync(offsets);
                result = event("committed");
            } catch (WakeupException stopping) {
                throw stopping;
            } catch (RuntimeException failed) {
                result = event("commitFailed").put("message", failed.toString());
            }
            List<List<Long>> pairs = new ArrayList<>();
            offsets.forEach((tp, next) -> pairs.add(List.of((long) tp.partition(), next.offset())));
            result.putPOJO("offsets", pairs);
            emit(result);
        }
    }
}
