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
// The line order is the send order; one producer sends them all, then
// flushes. Prints "sent N" on stdout; exits 1 if any send failed.

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
    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: ProduceRecords <bootstrap> <topic> <input-file> [producer.config=value ...]");
            System.exit(2);
        }
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("key.serializer", ByteArraySerializer.class.getName());
        props.put("value.serializer", ByteArraySerializer.class.getName());
        for (int i = 3; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            props.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        List<String> lines = Files.readAllLines(Path.of(args[2]), StandardCharsets.UTF_8);
        AtomicReference<Exception> failure = new AtomicReference<>();
        int sent = 0;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
            for (String line : lines) {
                if (line.isEmpty()) continue;
                producer.send(toRecord(args[1], line), (metadata, e) -> {
                    if (e != null) failure.compareAndSet(null, e);
                });
                sent++;
            }
            producer.flush();
        }
        if (failure.get() != null) {
            failure.get().printStackTrace();
            System.exit(1);
        }
        System.out.println("sent " + sent);
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
