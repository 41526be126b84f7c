/*
 * The Apache Kafka Java client's share consumer (KafkaShareConsumer,
 * kafka-clients 4.4.0, KIP-932) as a driver for Spool's share-group interop
 * tests (test/interop/clients/java-share-consumer.test.ts).
 *
 *   ShareDriver consume <bootstrap> <group> <topic> <name> <poison>
 *       subscribes in explicit acknowledgement mode and polls until stdin
 *       says "stop"; prints "rec <name> <partition> <offset> <value>
 *       <deliveryCount>" for every record delivered, acknowledges each
 *       ACCEPT except the value <poison> ("-" for none), which it RELEASEs,
 *       so that it comes back until the delivery limit archives it; commits
 *       after each poll and prints "commit <name> <error>" per partition
 *       result that is an error, else "acked <name> <value>..." with the
 *       values it accepted in that poll
 *   ShareDriver hold <bootstrap> <group> <topic> <name>
 *       polls until it is given records, prints them as "held <name>
 *       <partition> <offset> <value> <deliveryCount>", then neither
 *       acknowledges nor polls again (its acquisition locks run out) until
 *       killed
 *   ShareDriver earliest <bootstrap> <group>
 *       sets the group's share.auto.offset.reset to earliest
 *       (Admin.incrementalAlterConfigs on the GROUP resource) and prints "ok"
 *   ShareDriver perf <bootstrap> <group> <topic> <consumers> <count>
 *       (bench/share-bench.ts) <consumers> share consumers in this JVM, in
 *       implicit acknowledgement mode with the client's defaults, read until
 *       <count> records were delivered in all; prints "elapsed_ms <ms>"
 *       from the first record delivered to the last
 *   ShareDriver produce <bootstrap> <topic> <first> <count>
 *       writes the values first..first+count-1 (acks=all, idempotent) and
 *       prints "produced <count>"
 */
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public final class ShareDriver {
    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "consume" -> consume(args[1], args[2], args[3], args[4], args[5]);
            case "hold" -> hold(args[1], args[2], args[3], args[4]);
            case "earliest" -> earliest(args[1], args[2]);
            case "perf" -> perf(args[1], args[2], args[3], Integer.parseInt(args[4]), Integer.parseInt(args[5]));
            case "produce" -> produce(args[1], args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]));
            default -> throw new IllegalArgumentException("unknown mode " + args[0]);
        }
    }

    private static KafkaShareConsumer<String, String> shareConsumer(String bootstrap, String group, String name) {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("group.id", group);
        props.put("client.id", name);
        props.put("share.acknowledgement.mode", "explicit");
        // Small polls that never round up to whole batches, so that several consumers share one partition's records.
        props.put("max.poll.records", "10");
        props.put("share.acquire.mode", "record_limit");
        props.put("key.deserializer", StringDeserializer.class.getName());
        props.put("value.deserializer", StringDeserializer.class.getName());
        return new KafkaShareConsumer<>(props);
    }

    private static String describe(ConsumerRecord<String, String> record) {
        return record.partition() + " " + record.offset() + " " + record.value() + " " + record.deliveryCount().map(String::valueOf).orElse("-");
    }

    private static void consume(String bootstrap, String group, String topic, String name, String poison) throws Exception {
        AtomicBoolean stop = new AtomicBoolean(false);
        Thread stdin = new Thread(() -> {
            try (BufferedReader reader = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = reader.readLine()) != null) if (line.trim().equals("stop")) break;
            } catch (Exception ignored) {
                // stdin closed: stop as well.
            }
            stop.set(true);
        });
        stdin.setDaemon(true);
        stdin.start();
        try (KafkaShareConsumer<String, String> consumer = shareConsumer(bootstrap, group, name)) {
            consumer.subscribe(List.of(topic));
            System.out.println("subscribed " + name);
            System.out.flush();
            while (!stop.get()) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
                StringBuilder accepted = new StringBuilder();
                for (ConsumerRecord<String, String> record : records) {
                    System.out.println("rec " + name + " " + describe(record));
                    boolean release = record.value().equals(poison);
                    consumer.acknowledge(record, release ? AcknowledgeType.RELEASE : AcknowledgeType.ACCEPT);
                    if (!release) accepted.append(' ').append(record.value());
                }
                if (records.isEmpty()) continue;
                boolean failed = false;
                for (Map.Entry<TopicIdPartition, Optional<KafkaException>> result : consumer.commitSync().entrySet()) {
                    if (result.getValue().isEmpty()) continue;
                    failed = true;
                    System.out.println("commit " + name + " " + result.getValue().get().getClass().getSimpleName());
                }
                // The broker confirmed these acceptances (one partition per test topic): they must never come back.
                if (!failed && accepted.length() > 0) System.out.println("acked " + name + accepted);
                System.out.flush();
            }
        }
        System.out.println("closed " + name);
        System.out.flush();
    }

    private static void hold(String bootstrap, String group, String topic, String name) throws Exception {
        KafkaShareConsumer<String, String> consumer = shareConsumer(bootstrap, group, name);
        consumer.subscribe(List.of(topic));
        System.out.println("subscribed " + name);
        System.out.flush();
        for (;;) {
            ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
            if (records.isEmpty()) continue;
            for (ConsumerRecord<String, String> record : records) System.out.println("held " + name + " " + describe(record));
            System.out.flush();
            break;
        }
        // Keep the member alive (heartbeats run on the client's own thread) without acknowledging or polling.
        Thread.sleep(Long.MAX_VALUE);
    }

    private static void perf(String bootstrap, String group, String topic, int consumers, int count) throws Exception {
        java.util.concurrent.atomic.AtomicInteger delivered = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicLong firstNs = new java.util.concurrent.atomic.AtomicLong();
        List<Thread> threads = new java.util.ArrayList<>();
        for (int index = 0; index < consumers; index++) {
            String name = "perf-" + index;
            Thread thread = new Thread(() -> {
                Properties props = new Properties();
                props.put("bootstrap.servers", bootstrap);
                props.put("group.id", group);
                props.put("client.id", name);
                props.put("key.deserializer", StringDeserializer.class.getName());
                props.put("value.deserializer", StringDeserializer.class.getName());
                try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(props)) {
                    consumer.subscribe(List.of(topic));
                    while (delivered.get() < count) {
                        int got = consumer.poll(Duration.ofMillis(100)).count();
                        if (got > 0) firstNs.compareAndSet(0, System.nanoTime());
                        delivered.addAndGet(got);
                    }
                    consumer.commitSync();
                }
            });
            thread.start();
            threads.add(thread);
        }
        for (Thread thread : threads) thread.join();
        System.out.println("elapsed_ms " + (System.nanoTime() - firstNs.get()) / 1_000_000);
        System.out.flush();
    }

    private static void earliest(String bootstrap, String group) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        try (Admin admin = Admin.create(props)) {
            ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
            AlterConfigOp op = new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET);
            admin.incrementalAlterConfigs(Map.of(resource, List.of(op))).all().get();
        }
        System.out.println("ok");
        System.out.flush();
    }

    private static void produce(String bootstrap, String topic, int first, int count) throws Exception {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            for (int value = first; value < first + count; value++) producer.send(new ProducerRecord<>(topic, 0, null, String.valueOf(value)));
            producer.flush();
        }
        System.out.println("produced " + count);
        System.out.flush();
    }
}
