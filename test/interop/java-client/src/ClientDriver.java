/*
 * The Apache Kafka Java client (kafka-clients 4.4.0) as a driver for Spool's
 * client interop tests (test/interop/clients/scenario.ts describes the spec
 * and the JSON printed).
 *
 *   ClientDriver run <spec.json>      create the topic, produce each codec's records
 *                                     (idempotent, acks=all, explicit timestamps),
 *                                     consume by assign + seekToBeginning (no group),
 *                                     offsetsForTimes; prints one JSON object
 *   ClientDriver delete <spec.json>   list, describe, delete, list again
 *   ClientDriver sequence <bootstrap> <topic> <count>
 *                                     idempotent acks=all producer of values 0..count-1
 *                                     (key = value % 16); prints "ack <n> <partition> <offset>"
 *                                     per acknowledged record as soon as it is acknowledged,
 *                                     "failed <n> <error>" for a record given up on, then "done";
 *                                     retries for up to 2 minutes across broker restarts
 *   ClientDriver dump <bootstrap> <topic> <partitions>
 *                                     prints "<partition> <offset> <value>" for every record
 */
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Future;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public final class ClientDriver {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "run" -> System.out.println(JSON.writeValueAsString(run(JSON.readTree(new File(args[1])))));
            case "delete" -> System.out.println(JSON.writeValueAsString(delete(JSON.readTree(new File(args[1])))));
            case "sequence" -> sequence(args[1], args[2], Integer.parseInt(args[3]));
            case "dump" -> dump(args[1], args[2], Integer.parseInt(args[3]));
            default -> throw new IllegalArgumentException("unknown mode " + args[0]);
        }
    }

    private static Admin admin(String bootstrap) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        return Admin.create(props);
    }

    private static ObjectNode run(JsonNode spec) throws Exception {
        String bootstrap = spec.get("bootstrap").asText();
        String topic = spec.get("topic").asText();
        int partitions = spec.get("partitions").asInt();
        try (Admin admin = admin(bootstrap)) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
        }
        long start = System.currentTimeMillis();
        for (JsonNode batch : spec.get("batches")) produceBatch(spec, batch);
        long end = System.currentTimeMillis();
        ObjectNode out = JSON.createObjectNode();
        out.put("client", "kafka-clients " + org.apache.kafka.common.utils.internals.AppInfoParser.getVersion());
        consume(spec, out);
        out.put("produceStartMs", start);
        out.put("produceEndMs", end);
        return out;
    }

    private static void produceBatch(JsonNode spec, JsonNode batch) throws Exception {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, spec.get("bootstrap").asText());
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, spec.get("idempotent").asBoolean());
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, batch.get("codec").asText());
        props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
            List<Future<RecordMetadata>> acks = new ArrayList<>();
            for (JsonNode record : batch.get("records")) {
                RecordHeaders headers = new RecordHeaders();
                for (JsonNode header : record.get("headers")) headers.add(header.get(0).asText(), header.get(1).asText().getBytes(StandardCharsets.UTF_8));
                acks.add(producer.send(new ProducerRecord<>(spec.get("topic").asText(), null, record.get("timestamp").asLong(),
                        record.get("key").asText(), record.get("value").asText(), headers)));
            }
            producer.flush();
            for (Future<RecordMetadata> ack : acks) ack.get();
        }
    }

    private static KafkaConsumer<String, String> consumer(String bootstrap) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        return new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer());
    }

    private static List<TopicPartition> partitions(String topic, int count) {
        List<TopicPartition> all = new ArrayList<>();
        for (int p = 0; p < count; p++) all.add(new TopicPartition(topic, p));
        return all;
    }

    private static void consume(JsonNode spec, ObjectNode out) {
        String topic = spec.get("topic").asText();
        int expected = spec.get("expectedCount").asInt();
        List<TopicPartition> all = partitions(topic, spec.get("partitions").asInt());
        ArrayNode consumed = out.putArray("consumed");
        ArrayNode answers = out.putArray("offsetsForTimes");
        try (KafkaConsumer<String, String> consumer = consumer(spec.get("bootstrap").asText())) {
            consumer.assign(all);
            consumer.seekToBeginning(all);
            long deadline = System.currentTimeMillis() + TIMEOUT.toMillis();
            while (consumed.size() < expected && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                    ObjectNode json = consumed.addObject();
                    json.put("partition", record.partition());
                    json.put("offset", record.offset());
                    json.put("key", record.key());
                    json.put("value", record.value());
                    ArrayNode headers = json.putArray("headers");
                    for (Header header : record.headers()) headers.addArray().add(header.key()).add(new String(header.value(), StandardCharsets.UTF_8));
                    json.put("timestamp", record.timestamp());
                    json.put("timestampType", record.timestampType().name);
                }
            }
            for (JsonNode query : spec.get("timestampQueries")) {
                Map<TopicPartition, Long> request = new HashMap<>();
                for (TopicPartition tp : all) request.put(tp, query.asLong());
                Map<TopicPartition, OffsetAndTimestamp> found = consumer.offsetsForTimes(request, TIMEOUT);
                for (TopicPartition tp : all) {
                    ObjectNode answer = answers.addObject();
                    answer.put("timestamp", query.asLong());
                    answer.put("partition", tp.partition());
                    OffsetAndTimestamp at = found.get(tp);
                    if (at == null) answer.putNull("offset");
                    else answer.put("offset", at.offset());
                }
            }
        }
    }

    private static ObjectNode delete(JsonNode spec) throws Exception {
        String topic = spec.get("topic").asText();
        ObjectNode out = JSON.createObjectNode();
        try (Admin admin = admin(spec.get("bootstrap").asText())) {
            out.set("topicsBefore", JSON.valueToTree(new TreeSet<>(admin.listTopics().names().get())));
            out.put("describedPartitions", admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().size());
            admin.deleteTopics(List.of(topic)).all().get();
            out.set("topicsAfter", JSON.valueToTree(new TreeSet<>(admin.listTopics().names().get())));
        }
        return out;
    }

    private static void sequence(String bootstrap, String topic, int count) throws Exception {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.LINGER_MS_CONFIG, 2);
        props.put(ProducerConfig.BATCH_SIZE_CONFIG, 4096);
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 120_000);
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        props.put(ProducerConfig.RECONNECT_BACKOFF_MS_CONFIG, 50);
        props.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 500);
        props.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, 50);
        props.put(ProducerConfig.RETRY_BACKOFF_MAX_MS_CONFIG, 500);
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
            for (int n = 0; n < count; n++) {
                final int value = n;
                producer.send(new ProducerRecord<>(topic, String.valueOf(n % 16), String.valueOf(n)), (metadata, error) -> {
                    synchronized (out) {
                        if (error == null) out.println("ack " + value + " " + metadata.partition() + " " + metadata.offset());
                        else out.println("failed " + value + " " + error.getClass().getSimpleName());
                        out.flush();
                    }
                });
            }
            producer.flush();
        }
        synchronized (out) {
            out.println("done");
            out.flush();
        }
    }

    private static void dump(String bootstrap, String topic, int count) {
        List<TopicPartition> all = partitions(topic, count);
        try (KafkaConsumer<String, String> consumer = consumer(bootstrap)) {
            consumer.assign(all);
            consumer.seekToBeginning(all);
            Map<TopicPartition, Long> end = consumer.endOffsets(all, TIMEOUT);
            StringBuilder lines = new StringBuilder();
            long deadline = System.currentTimeMillis() + TIMEOUT.toMillis();
            Set<TopicPartition> open = new TreeSet<>((a, b) -> Integer.compare(a.partition(), b.partition()));
            for (TopicPartition tp : all) if (end.get(tp) > 0) open.add(tp);
            while (!open.isEmpty() && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                    lines.append(record.partition()).append(' ').append(record.offset()).append(' ').append(record.value()).append('\n');
                }
                open.removeIf(tp -> consumer.position(tp) >= end.get(tp));
            }
            if (!open.isEmpty()) throw new IllegalStateException("dump did not reach the end offsets " + end);
            System.out.print(lines);
            System.out.println("end " + JSON.valueToTree(end.entrySet().stream().map(e -> e.getKey().partition() + "=" + e.getValue()).toList()));
        }
    }
}
