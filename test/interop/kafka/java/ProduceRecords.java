// Produces records read from a file with the real Kafka Java producer, so
// tests can compare what Spool (or Kafka) stored with exactly what was sent.
//
// Usage: ProduceRecords <bootstrap> <topic> <input-file> [producer.config=value ...]
// e.g.   ProduceRecords 127.0.0.1:9092 t records.txt compression.type=zstd linger.ms=5
//
// Input: one record per line, five tab-separated fields:
//   partition  decimal, or "-" to let the partitioner choose
//   key        base64, or "-" for a null key
//   value      base64, or "-" for a null value
//   timestamp  decimal epoch ms, or "-" for the producer's clock
//   headers    "-" for none, else comma-separated base64(name):base64(value)
//              where a value of "-" is a null header value
// and directive lines:
//   #config name=value ...   flush and close the current producer; later
//                            records go through a new producer with the
//                            command-line configs plus these (e.g. another
//                            compression.type, or a transactional.id)
//   #begin / #commit / #abort   transaction boundaries (the producer needs a
//                            transactional.id; sends are flushed first, so an
//                            aborted transaction's records are in the log)
// The line order is the send order. Prints "sent N" on stdout; exits 1 if any
// send failed.

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class ProduceRecords {
    private static final AtomicReference<Exception> FAILURE = new AtomicReference<>();

    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: ProduceRecords <bootstrap> <topic> <input-file> [producer.config=value ...]");
            System.exit(2);
        }
        Properties base = new Properties();
        base.put("bootstrap.servers", args[0]);
        base.put("key.serializer", ByteArraySerializer.class.getName());
        base.put("value.serializer", ByteArraySerializer.class.getName());
        putAll(base, args, 3);
        String topic = args[1];
        List<String> lines = Files.readAllLines(Path.of(args[2]), StandardCharsets.UTF_8);
        KafkaProducer<byte[], byte[]> producer = open(base, new String[0]);
        int sent = 0;
        try {
            for (String line : lines) {
                if (line.isEmpty()) continue;
                if (line.startsWith("#config")) {
                    producer.close();
                    producer = open(base, line.substring("#config".length()).trim().split("\\s+"));
                } else if (line.equals("#begin")) {
                    producer.beginTransaction();
                } else if (line.equals("#commit")) {
                    producer.flush();
                    producer.commitTransaction();
                } else if (line.equals("#abort")) {
                    producer.flush();
                    producer.abortTransaction();
                } else {
                    producer.send(toRecord(topic, line), (metadata, e) -> {
                        if (e != null) FAILURE.compareAndSet(null, e);
                    });
                    sent++;
                }
            }
            producer.flush();
        } finally {
            producer.close();
        }
        if (FAILURE.get() != null) {
            FAILURE.get().printStackTrace();
            System.exit(1);
        }
        System.out.println("sent " + sent);
    }

    private static KafkaProducer<byte[], byte[]> open(Properties base, String[] overrides) {
        Properties props = new Properties();
        props.putAll(base);
        putAll(props, overrides, 0);
        KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props);
        if (props.containsKey("transactional.id")) producer.initTransactions();
        return producer;
    }

    private static void putAll(Properties props, String[] configs, int from) {
        for (int i = from; i < configs.length; i++) {
            if (configs[i].isEmpty()) continue;
            int eq = configs[i].indexOf('=');
            if (eq <= 0) throw new IllegalArgumentException("expected name=value: " + configs[i]);
            props.put(configs[i].substring(0, eq), configs[i].substring(eq + 1));
        }
    }

    private static ProducerRecord<byte[], byte[]> toRecord(String topic, String line) {
        String[] f = line.split("\t", -1);
        if (f.length != 5) throw new IllegalArgumentException("expected 5 fields: " + line);
        Integer partition = f[0].equals("-") ? null : Integer.valueOf(f[0]);
        Long timestamp = f[3].equals("-") ? null : Long.valueOf(f[3]);
        return new ProducerRecord<>(topic, partition, timestamp, bytes(f[1]), bytes(f[2]), headers(f[4]));
    }

    private static List<Header> headers(String field) {
        List<Header> headers = new ArrayList<>();
        if (field.equals("-")) return headers;
        for (String h : field.split(",")) {
            int colon = h.indexOf(':');
            String name = new String(Base64.getDecoder().decode(h.substring(0, colon)), StandardCharsets.UTF_8);
            headers.add(new RecordHeader(name, bytes(h.substring(colon + 1))));
        }
        return headers;
    }

    private static byte[] bytes(String field) {
        return field.equals("-") ? null : Base64.getDecoder().decode(field);
    }
}
