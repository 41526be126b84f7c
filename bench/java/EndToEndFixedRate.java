/*
 * End-to-end latency at a fixed rate, with the Java client (kafka-clients 4.4.0),
 * for `npm run bench` scenario 5.
 *
 * One JVM, two threads. The producer thread sends on a fixed schedule: record i is
 * due at start + i / rate, and its value carries that intended time
 * (System.nanoTime). When the sender falls behind (send() blocked on a full
 * buffer, a GC pause, a broker stall) it catches up by sending every overdue
 * record at once, still stamped with its intended time, so a stall shows up as
 * latency instead of as fewer samples (no coordinated omission). The consumer
 * thread reads every partition from the beginning (the topic is new) and records
 * receive time - intended time in an HdrHistogram, for records due after the
 * warm-up. Latency therefore includes batching (linger.ms), the produce
 * round trip, the broker making the record visible (high watermark) and the fetch.
 *
 * Usage: EndToEndFixedRate <bootstrap> <topic> <recordsPerSecond> <recordSizeBytes>
 *          <warmupSeconds> <measureSeconds> [producer|consumer config name=value ...]
 *   (config entries prefixed "consumer." go to the consumer, the rest to the producer)
 * Prints one JSON line on stdout.
 */
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class EndToEndFixedRate {
    /** How long the consumer keeps waiting for records after the last one was due. */
    private static final long DRAIN_NS = 15_000_000_000L;

    public static void main(String[] args) throws Exception {
        if (args.length < 6) {
            System.err.println("usage: EndToEndFixedRate <bootstrap> <topic> <recordsPerSecond> <recordSizeBytes> <warmupSeconds> <measureSeconds> [name=value ...]");
            System.exit(2);
        }
        String bootstrap = args[0];
        String topic = args[1];
        double recordsPerSecond = Double.parseDouble(args[2]);
        int recordSizeBytes = Integer.parseInt(args[3]);
        double warmupSeconds = Double.parseDouble(args[4]);
        double measureSeconds = Double.parseDouble(args[5]);
        Properties producerProps = new Properties();
        Properties consumerProps = new Properties();
        producerProps.put("bootstrap.servers", bootstrap);
        consumerProps.put("bootstrap.servers", bootstrap);
        consumerProps.put("enable.auto.commit", "false");
        for (int i = 6; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            String name = args[i].substring(0, eq);
            String value = args[i].substring(eq + 1);
            if (name.startsWith("consumer.")) consumerProps.put(name.substring("consumer.".length()), value);
            else producerProps.put(name, value);
        }

        long intervalNs = (long) (1e9 / recordsPerSecond);
        long warmupRecords = (long) (warmupSeconds * recordsPerSecond);
        long totalRecords = warmupRecords + (long) (measureSeconds * recordsPerSecond);
        Histogram histogram = new Histogram(3_600_000_000L, 3);
        AtomicLong measuredReceived = new AtomicLong();

        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        List<TopicPartition> partitions = new ArrayList<>();
        long metadataDeadlineNs = System.nanoTime() + 30_000_000_000L;
        while (partitions.isEmpty()) {
            for (PartitionInfo info : consumer.partitionsFor(topic)) partitions.add(new TopicPartition(topic, info.partition()));
            if (partitions.isEmpty() && System.nanoTime() > metadataDeadlineNs) throw new IllegalStateException("topic " + topic + " has no partitions");
            if (partitions.isEmpty()) Thread.sleep(100);
        }
        consumer.assign(partitions);
        consumer.seekToBeginning(partitions);
        for (TopicPartition tp : partitions) consumer.position(tp);

        KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps, new ByteArraySerializer(), new ByteArraySerializer());
        producer.partitionsFor(topic);
        long startNs = System.nanoTime() + 200_000_000L;
        long lastDueNs = startNs + (totalRecords - 1) * intervalNs;
        long measureFromNs = startNs + warmupRecords * intervalNs;
        long[] maxLagNs = {0};
        Thread sender = new Thread(() -> {
            byte[] pad = new byte[Math.max(0, recordSizeBytes - 8)];
            for (int i = 0; i < pad.length; i++) pad[i] = (byte) ('A' + i % 26);
            for (long i = 0; i < totalRecords; i++) {
                long dueNs = startNs + i * intervalNs;
                long nowNs = System.nanoTime();
                while (nowNs < dueNs) {
                    LockSupport.parkNanos(dueNs - nowNs);
                    nowNs = System.nanoTime();
                }
                maxLagNs[0] = Math.max(maxLagNs[0], nowNs - dueNs);
                byte[] value = ByteBuffer.allocate(8 + pad.length).putLong(dueNs).put(pad).array();
                producer.send(new ProducerRecord<>(topic, value));
            }
            producer.flush();
        }, "fixed-rate-sender");
        sender.start();

        long received = 0;
        long deadlineNs = lastDueNs + DRAIN_NS;
        while (received < totalRecords && System.nanoTime() < deadlineNs) {
            ConsumerRecords<byte[], byte[]> records = consumer.poll(java.time.Duration.ofMillis(100));
            long nowNs = System.nanoTime();
            for (ConsumerRecord<byte[], byte[]> record : records) {
                if (record.value() == null || record.value().length < 8) continue; // the harness's topic-ready records
                long dueNs = ByteBuffer.wrap(record.value()).getLong();
                if (dueNs < startNs || dueNs > lastDueNs) continue; // not ours
                received++;
                if (dueNs >= measureFromNs) {
                    histogram.recordValue(Math.max(0, (nowNs - dueNs) / 1000));
                    measuredReceived.incrementAndGet();
                }
            }
        }
        sender.join();
        producer.close();
        consumer.close();

        long measuredExpected = totalRecords - warmupRecords;
        System.out.printf(java.util.Locale.ROOT,
            "{\"sentRecords\":%d,\"receivedRecords\":%d,\"measuredRecords\":%d,\"missingRecords\":%d,"
                + "\"p50Ms\":%.3f,\"p99Ms\":%.3f,\"p999Ms\":%.3f,\"maxMs\":%.3f,\"meanMs\":%.3f,\"senderMaxLagMs\":%.3f}%n",
            totalRecords, received, measuredReceived.get(), measuredExpected - measuredReceived.get(),
            histogram.getValueAtPercentile(50) / 1000.0, histogram.getValueAtPercentile(99) / 1000.0,
            histogram.getValueAtPercentile(99.9) / 1000.0, histogram.getMaxValue() / 1000.0,
            histogram.getMean() / 1000.0, maxLagNs[0] / 1e6);
    }
}
