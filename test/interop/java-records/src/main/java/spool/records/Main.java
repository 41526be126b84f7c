package spool.records;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;

/**
 * Record batch v2 interop with Apache Kafka's Java client.
 *
 *   write DIR      writes one batch file per case (DIR/NAME.bin, built by
 *                  MemoryRecordsBuilder, the producer's batch writer) and
 *                  DIR/cases.json: for each case the batch header and the
 *                  records as Kafka itself reads them back, after checking
 *                  that the read-back equals what was appended.
 *   read FILE...   reads batches that another implementation wrote, checks
 *                  each one's CRC (ensureValid) and prints the same JSON for
 *                  them on stdout: [{"file", "batches" | "error"}].
 *
 * Bytes in JSON are base64; null stays null. Everything is deterministic.
 */
public final class Main {
    private static final long BASE_TIME_MS = 1_700_000_000_000L;

    public static void main(String[] args) throws IOException {
        if (args.length >= 2 && args[0].equals("write")) {
            write(Path.of(args[1]));
        } else if (args.length >= 2 && args[0].equals("read")) {
            StringBuilder out = new StringBuilder("[");
            for (int i = 1; i < args.length; i++) {
                if (i > 1) out.append(",\n");
                out.append(readFile(Path.of(args[i])));
            }
            System.out.println(out.append("]"));
        } else {
            System.err.println("usage: Main write DIR | Main read FILE...");
            System.exit(2);
        }
    }

    // ---- write

    private static void write(Path dir) throws IOException {
        Files.createDirectories(dir);
        List<String> cases = new ArrayList<>();
        List<SimpleRecord> mixed = mixedRecords();

        cases.add(writeCase(dir, "none", build(Compression.NONE, Options.plain(), mixed)));
        cases.add(writeCase(dir, "gzip", build(Compression.gzip().build(), Options.plain(), mixed)));
        cases.add(writeCase(dir, "snappy", build(Compression.snappy().build(), Options.plain(), mixed)));
        cases.add(writeCase(dir, "lz4", build(Compression.lz4().build(), Options.plain(), mixed)));
        cases.add(writeCase(dir, "zstd", build(Compression.zstd().build(), Options.plain(), mixed)));
        cases.add(writeCase(dir, "gzip-level9", build(Compression.gzip().level(9).build(), Options.plain(), mixed)));
        cases.add(writeCase(dir, "lz4-level17", build(Compression.lz4().level(17).build(), Options.plain(), mixed)));
        cases.add(writeCase(dir, "zstd-level19", build(Compression.zstd().level(19).build(), Options.plain(), mixed)));

        Options idempotent = Options.plain();
        idempotent.baseOffset = 500;
        idempotent.producerId = 4242;
        idempotent.producerEpoch = 3;
        idempotent.baseSequence = 17;
        idempotent.partitionLeaderEpoch = 7;
        cases.add(writeCase(dir, "idempotent-snappy", build(Compression.snappy().build(), idempotent, mixed)));

        Options transactional = Options.plain();
        transactional.producerId = 99;
        transactional.producerEpoch = 0;
        transactional.baseSequence = 0;
        transactional.isTransactional = true;
        cases.add(writeCase(dir, "transactional-zstd", build(Compression.zstd().build(), transactional, mixed)));

        Options logAppendTime = Options.plain();
        logAppendTime.timestampType = TimestampType.LOG_APPEND_TIME;
        logAppendTime.logAppendTime = BASE_TIME_MS + 9_999;
        cases.add(writeCase(dir, "logappendtime-lz4", build(Compression.lz4().build(), logAppendTime, mixed)));

        cases.add(writeCase(dir, "many-gzip", build(Compression.gzip().build(), Options.plain(), manyRecords(1000))));
        cases.add(writeCase(dir, "many-none", build(Compression.NONE, Options.plain(), manyRecords(300))));

        MemoryRecords commit = MemoryRecords.withEndTransactionMarker(42L, BASE_TIME_MS + 1_000, 5, 99L, (short) 0,
            new EndTransactionMarker(ControlRecordType.COMMIT, 11));
        MemoryRecords abort = MemoryRecords.withEndTransactionMarker(43L, BASE_TIME_MS + 2_000, 5, 99L, (short) 0,
            new EndTransactionMarker(ControlRecordType.ABORT, 12));
        cases.add(writeCase(dir, "control-commit", commit));
        cases.add(writeCase(dir, "control-abort", abort));

        Options second = Options.plain();
        second.baseOffset = 5;
        cases.add(writeCase(dir, "multi", concat(
            build(Compression.NONE, Options.plain(), mixed.subList(0, 5)),
            build(Compression.gzip().build(), second, mixed.subList(0, 3)),
            commit)));

        Files.writeString(dir.resolve("cases.json"), "[\n" + String.join(",\n", cases) + "\n]\n");
        System.out.println("java-records: wrote " + cases.size() + " cases to " + dir);
    }

    /** Batch-level settings, MemoryRecordsBuilder's arguments. */
    private static final class Options {
        long baseOffset = 0;
        long producerId = RecordBatch.NO_PRODUCER_ID;
        short producerEpoch = RecordBatch.NO_PRODUCER_EPOCH;
        int baseSequence = RecordBatch.NO_SEQUENCE;
        boolean isTransactional = false;
        int partitionLeaderEpoch = RecordBatch.NO_PARTITION_LEADER_EPOCH;
        TimestampType timestampType = TimestampType.CREATE_TIME;
        long logAppendTime = RecordBatch.NO_TIMESTAMP;

        static Options plain() {
            return new Options();
        }
    }

    private static MemoryRecords build(Compression compression, Options o, List<SimpleRecord> records) {
        ByteBuffer buffer = ByteBuffer.allocate(1 << 20);
        MemoryRecordsBuilder builder = MemoryRecords.builder(buffer, RecordBatch.MAGIC_VALUE_V2, compression,
            o.timestampType, o.baseOffset, o.logAppendTime, o.producerId, o.producerEpoch, o.baseSequence,
            o.isTransactional, o.partitionLeaderEpoch);
        for (SimpleRecord record : records) builder.append(record);
        MemoryRecords built = builder.build();
        checkReadBack(built, records);
        return built;
    }

    /** The records Kafka reads back must be the ones appended (timestamps aside under LogAppendTime). */
    private static void checkReadBack(MemoryRecords built, List<SimpleRecord> sent) {
        int index = 0;
        for (MutableRecordBatch batch : built.batches()) {
            batch.ensureValid();
            for (Record record : batch) {
                SimpleRecord expected = sent.get(index++);
                if (!same(record.key(), expected.key()) || !same(record.value(), expected.value())
                    || !Arrays.equals(record.headers(), expected.headers())) {
                    throw new IllegalStateException("read-back differs at record " + (index - 1));
                }
            }
        }
        if (index != sent.size()) throw new IllegalStateException("read back " + index + " of " + sent.size());
    }

    private static boolean same(ByteBuffer a, ByteBuffer b) {
        return a == null ? b == null : a.equals(b);
    }

    private static List<SimpleRecord> mixedRecords() {
        List<SimpleRecord> records = new ArrayList<>();
        records.add(new SimpleRecord(BASE_TIME_MS, utf8("key-0"), utf8("value-0"), new Header[] {
            new RecordHeader("trace", utf8("abc")), new RecordHeader("empty-value", (byte[]) null)}));
        records.add(new SimpleRecord(BASE_TIME_MS + 5, null, utf8("no key")));
        records.add(new SimpleRecord(BASE_TIME_MS - 10, utf8("tombstone"), null));
        records.add(new SimpleRecord(BASE_TIME_MS + 100, new byte[0], new byte[0], new Header[] {
            new RecordHeader("", new byte[] {0, 1, 2}), new RecordHeader("ünïcødé ✓", utf8("ok"))}));
        records.add(new SimpleRecord(BASE_TIME_MS + 200, pseudoRandom(16, 1), text(100_000, 2)));
        records.add(new SimpleRecord(BASE_TIME_MS + 150, utf8("binary"), pseudoRandom(70_000, 3)));
        return records;
    }

    private static List<SimpleRecord> manyRecords(int count) {
        List<SimpleRecord> records = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            records.add(new SimpleRecord(BASE_TIME_MS + i * 1000L, utf8("k" + i), utf8("value number " + i)));
        }
        return records;
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /** Incompressible bytes from a fixed linear congruential generator. */
    private static byte[] pseudoRandom(int length, long seed) {
        byte[] out = new byte[length];
        long state = seed;
        for (int i = 0; i < length; i++) {
            state = state * 6364136223846793005L + 1442695040888963407L;
            out[i] = (byte) (state >>> 56);
        }
        return out;
    }

    /** Compressible text: words picked by a fixed generator. */
    private static byte[] text(int length, long seed) {
        String[] words = {"kafka ", "spool ", "record ", "batch ", "offset ", "leader ", "epoch ", "log "};
        StringBuilder out = new StringBuilder(length);
        long state = seed;
        while (out.length() < length) {
            state = state * 6364136223846793005L + 1442695040888963407L;
            out.append(words[(int) (state >>> 61)]);
        }
        return utf8(out.substring(0, length));
    }

    private static MemoryRecords concat(MemoryRecords... parts) {
        int size = 0;
        for (MemoryRecords part : parts) size += part.sizeInBytes();
        ByteBuffer buffer = ByteBuffer.allocate(size);
        for (MemoryRecords part : parts) buffer.put(part.buffer().duplicate());
        buffer.flip();
        return MemoryRecords.readableRecords(buffer);
    }

    private static String writeCase(Path dir, String name, MemoryRecords records) throws IOException {
        ByteBuffer bytes = records.buffer().duplicate();
        byte[] data = new byte[bytes.remaining()];
        bytes.get(data);
        Files.write(dir.resolve(name + ".bin"), data);
        return "{\"name\":" + str(name) + ",\"file\":" + str(name + ".bin") + ",\"batches\":" + batchesJson(records) + "}";
    }

    // ---- read

    private static String readFile(Path file) throws IOException {
        MemoryRecords records = MemoryRecords.readableRecords(ByteBuffer.wrap(Files.readAllBytes(file)));
        try {
            for (MutableRecordBatch batch : records.batches()) batch.ensureValid();
            return "{\"file\":" + str(file.getFileName().toString()) + ",\"batches\":" + batchesJson(records) + "}";
        } catch (RuntimeException e) {
            return "{\"file\":" + str(file.getFileName().toString()) + ",\"error\":" + str(e.toString()) + "}";
        }
    }

    // ---- JSON

    private static String batchesJson(MemoryRecords records) {
        List<String> batches = new ArrayList<>();
        for (MutableRecordBatch batch : records.batches()) batches.add(batchJson(batch));
        return "[" + String.join(",", batches) + "]";
    }

    private static String batchJson(MutableRecordBatch batch) {
        List<String> records = new ArrayList<>();
        for (Record record : batch) records.add(recordJson(record));
        return "{\"baseOffset\":" + batch.baseOffset()
            + ",\"lastOffset\":" + batch.lastOffset()
            + ",\"partitionLeaderEpoch\":" + batch.partitionLeaderEpoch()
            + ",\"magic\":" + batch.magic()
            + ",\"crc\":" + batch.checksum()
            + ",\"sizeInBytes\":" + batch.sizeInBytes()
            + ",\"compression\":" + batch.compressionType().id
            + ",\"timestampType\":" + batch.timestampType().id
            + ",\"isTransactional\":" + batch.isTransactional()
            + ",\"isControl\":" + batch.isControlBatch()
            + ",\"producerId\":" + batch.producerId()
            + ",\"producerEpoch\":" + batch.producerEpoch()
            + ",\"baseSequence\":" + batch.baseSequence()
            + ",\"maxTimestamp\":" + batch.maxTimestamp()
            + ",\"count\":" + batch.countOrNull()
            + ",\"records\":[" + String.join(",", records) + "]}";
    }

    private static String recordJson(Record record) {
        List<String> headers = new ArrayList<>();
        for (Header header : record.headers()) {
            headers.add("{\"key\":" + str(header.key()) + ",\"value\":" + b64(header.value()) + "}");
        }
        return "{\"offset\":" + record.offset() + ",\"timestamp\":" + record.timestamp()
            + ",\"key\":" + b64(record.key()) + ",\"value\":" + b64(record.value())
            + ",\"headers\":[" + String.join(",", headers) + "]}";
    }

    private static String b64(ByteBuffer buffer) {
        if (buffer == null) return "null";
        byte[] bytes = new byte[buffer.remaining()];
        buffer.duplicate().get(bytes);
        return b64(bytes);
    }

    private static String b64(byte[] bytes) {
        return bytes == null ? "null" : "\"" + Base64.getEncoder().encodeToString(bytes) + "\"";
    }

    /** A JSON string; names here are plain, but escape what JSON requires anyway. */
    private static String str(String text) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : text.toCharArray()) {
            if (c == '"' || c == '\\') out.append('\\').append(c);
            else if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
            else out.append(c);
        }
        return out.append('"').toString();
    }
}
