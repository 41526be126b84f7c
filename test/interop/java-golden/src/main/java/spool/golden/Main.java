package spool.golden;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.message.ApiMessageType;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.message.ResponseHeaderData;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.Readable;
import org.apache.kafka.common.protocol.types.RawTaggedField;
import org.apache.kafka.common.protocol.types.Schema;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HexFormat;
import java.util.Random;

/**
 * Writes golden wire bytes produced by Apache Kafka's own Java client.
 *
 * For every API key Kafka knows (ApiMessageType) and every version from the
 * lowest supported to the highest including an unstable latest one, and for
 * the request and response headers, it builds SAMPLES_PER_VERSION seeded
 * message bodies with non-default values (see SchemaValues), serializes each
 * with the generated message's size() + write(), checks that Kafka reads the
 * bytes back to an equal object, and writes one JSON line per body:
 *
 *   {apiKey, name, version, side, hex, json, unknownTags?, unstable?, defaults?, nearDefaults?}
 *
 * where json is the generated JsonConverter.write(message, version, false)
 * (records appear as "<field>SizeInBytes") and unknownTags lists raw tagged
 * fields added at the top level that Kafka's schema does not know; unstable
 * marks a latest version Kafka flags latestVersionUnstable; defaults marks the
 * extra entry per version and side whose message has every field at Kafka's
 * default; nearDefaults marks the two entries per version and side whose
 * values are all zeros or all minus ones (see SchemaValues). apiKey is -1
 * for the headers. Usage: Main OUTPUT_FILE
 */
public final class Main {
    private static final long SEED = 20261129L;
    private static final int SAMPLES_PER_VERSION = 3;
    /** Tags from here up are unknown to every Kafka schema. */
    private static final int UNKNOWN_TAG_MIN = 1000;

    private final BufferedWriter out;
    private final ObjectMapper mapper = new ObjectMapper();
    private final byte[] recordBatch = recordBatch();
    private int entries = 0;

    private Main(BufferedWriter out) {
        this.out = out;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1) throw new IllegalArgumentException("usage: Main OUTPUT_FILE");
        Path target = Path.of(args[0]).toAbsolutePath();
        Files.createDirectories(target.getParent());
        Path partial = target.resolveSibling(target.getFileName() + ".partial");
        int entries;
        try (BufferedWriter writer = Files.newBufferedWriter(partial, StandardCharsets.UTF_8)) {
            Main main = new Main(writer);
            main.writeAll();
            entries = main.entries;
        }
        Files.move(partial, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        System.out.println("wrote " + entries + " golden entries to " + target);
    }

    private void writeAll() throws Exception {
        SchemaValues.learnNames(RequestHeaderData.class);
        SchemaValues.learnNames(ResponseHeaderData.class);
        for (ApiMessageType type : ApiMessageType.values()) {
            if (!hasVersions(type)) continue;
            SchemaValues.learnNames(type.newRequest().getClass());
            SchemaValues.learnNames(type.newResponse().getClass());
        }
        writeHeader("RequestHeader", "request", RequestHeaderData.class, RequestHeaderData.SCHEMAS);
        writeHeader("ResponseHeader", "response", ResponseHeaderData.class, ResponseHeaderData.SCHEMAS);
        for (ApiMessageType type : ApiMessageType.values()) {
            if (!hasVersions(type)) continue;
            short highest = type.highestSupportedVersion(true);
            for (short version = type.lowestSupportedVersion(); version <= highest; version++) {
                boolean unstable = type.latestVersionUnstable() && version == highest;
                Spec request = new Spec(type.apiKey(), type.name, "request", type.newRequest().getClass(), type.requestSchemas()[version], true, unstable);
                Spec response = new Spec(type.apiKey(), type.name, "response", type.newResponse().getClass(), type.responseSchemas()[version], true, unstable);
                writeSamples(request, version);
                writeSamples(response, version);
            }
        }
    }

    /** Keys Kafka has retired (LeaderAndIsr, StopReplica, ... in 4.x) keep an enum entry but no versions. */
    private static boolean hasVersions(ApiMessageType type) {
        return type.requestSchemas().length > 0 && type.lowestSupportedVersion() <= type.highestSupportedVersion(true);
    }

    private void writeHeader(String name, String side, Class<?> messageClass, Schema[] schemas) throws Exception {
        for (short version = 0; version < schemas.length; version++) {
            if (schemas[version] == null) continue;
            // Spool's header codec takes no unknown tags for the response header, so none are added here.
            writeSamples(new Spec(-1, name, side, messageClass, schemas[version], false, false), version);
        }
    }

    private record Spec(int apiKey, String name, String side, Class<?> messageClass, Schema schema, boolean unknownTags, boolean unstable) {}

    private void writeSamples(Spec spec, short version) throws Exception {
        if (spec.schema == null) throw new IllegalStateException(spec.name + " has no schema for v" + version);
        for (int sample = 0; sample < SAMPLES_PER_VERSION; sample++) {
            long id = (((spec.apiKey + 7L) * 1_000L + version) * 2 + (spec.side.equals("request") ? 0 : 1)) * 16 + sample;
            Random random = new Random(mix64(SEED + id));
            emit(sampleLine(spec, version, new SchemaValues(random, recordBatch), spec.unknownTags ? random : null));
        }
        writeDefaults(spec, version);
        // Deterministic near-default samples: all zeros / true, then all minus ones / false.
        for (int pick = 0; pick < 2; pick++) {
            emit(sampleLine(spec, version, SchemaValues.nearDefaults(pick), null).put("nearDefaults", true));
        }
    }

    /**
     * One more entry per version and side: the message with every field at
     * Kafka's default (and one element in each array of structs, see
     * DefaultsMessage), so that Spool's declared defaults can be checked by
     * encoding a Spool message of the same shape with no values set.
     */
    private void writeDefaults(Spec spec, short version) throws Exception {
        Message message = (Message) DefaultsMessage.build(spec.messageClass, spec.schema);
        byte[] bytes;
        try {
            bytes = serialize(message, version);
        } catch (RuntimeException e) {
            // A field whose default is null but that is not nullable in this version: Kafka cannot write it either.
            System.err.println("java-golden: no defaults entry for " + spec.name + " v" + version + " " + spec.side + ": " + e.getMessage());
            return;
        }
        ObjectNode line = line(spec, version, bytes, message);
        line.put("defaults", true);
        emit(line);
    }

    /** Spreads nearby seeds apart (java.util.Random's first outputs for close seeds are close). */
    private static long mix64(long z) {
        z = (z ^ (z >>> 33)) * 0xff51afd7ed558ccdL;
        z = (z ^ (z >>> 33)) * 0xc4ceb9fe1a85ec53L;
        return z ^ (z >>> 33);
    }

    /** A sample built from `values`; with `unknownTagRandom`, sometimes one unknown tagged field too. */
    private static ObjectNode sampleLine(Spec spec, short version, SchemaValues values, Random unknownTagRandom) throws Exception {
        ObjectNode input = values.struct(spec.schema, 0);
        Class<?> converter = Class.forName(spec.messageClass.getName() + "JsonConverter");
        Message message = (Message) converter.getMethod("read", JsonNode.class, short.class).invoke(null, input, version);
        ArrayNode unknownTags = JsonNodeFactory.instance.arrayNode();
        if (unknownTagRandom != null && SchemaValues.isFlexible(spec.schema) && unknownTagRandom.nextInt(3) == 0) {
            Random random = unknownTagRandom;
            RawTaggedField raw = new RawTaggedField(UNKNOWN_TAG_MIN + random.nextInt(1000), values.bytes(random.nextInt(6)));
            message.unknownTaggedFields().add(raw);
            unknownTags.addObject().put("tag", raw.tag()).put("hex", HexFormat.of().formatHex(raw.data()));
        }
        byte[] bytes = serialize(message, version);
        checkReadsBack(spec, message, bytes, version);
        ObjectNode line = line(spec, version, bytes, message);
        if (!unknownTags.isEmpty()) line.set("unknownTags", unknownTags);
        return line;
    }

    private static ObjectNode line(Spec spec, short version, byte[] bytes, Message message) throws Exception {
        Class<?> converter = Class.forName(spec.messageClass.getName() + "JsonConverter");
        JsonNode json = (JsonNode) converter.getMethod("write", spec.messageClass, short.class, boolean.class).invoke(null, message, version, false);
        ObjectNode line = JsonNodeFactory.instance.objectNode();
        line.put("apiKey", spec.apiKey);
        line.put("name", spec.name);
        line.put("version", version);
        line.put("side", spec.side);
        line.put("hex", HexFormat.of().formatHex(bytes));
        line.set("json", json);
        if (spec.unstable) line.put("unstable", true);
        return line;
    }

    private void emit(ObjectNode line) throws IOException {
        out.write(mapper.writeValueAsString(line));
        out.write('\n');
        entries++;
    }

    private static byte[] serialize(Message message, short version) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int size = message.size(cache, version);
        ByteBuffer buffer = ByteBuffer.allocate(size);
        message.write(new ByteBufferAccessor(buffer), cache, version);
        if (buffer.position() != size) {
            throw new IllegalStateException("wrote " + buffer.position() + " bytes, size() said " + size);
        }
        return buffer.array();
    }

    /** Kafka itself must read the bytes back to an equal message, or the golden entry proves nothing. */
    private static void checkReadsBack(Spec spec, Message message, byte[] bytes, short version) throws Exception {
        ByteBufferAccessor accessor = new ByteBufferAccessor(ByteBuffer.wrap(bytes));
        Object back = spec.messageClass.getConstructor(Readable.class, short.class).newInstance(accessor, version);
        if (!back.equals(message)) {
            throw new IllegalStateException(spec.name + " v" + version + " " + spec.side + " does not read back equal");
        }
    }

    /** A small, real v2 record batch: two records, one with a key and a header, fixed timestamps. */
    private static byte[] recordBatch() {
        Header[] headers = {new RecordHeader("trace-ü", "id-1".getBytes(StandardCharsets.UTF_8))};
        MemoryRecords records = MemoryRecords.withRecords(
            Compression.NONE,
            new SimpleRecord(1_700_000_000_000L, "key-1".getBytes(StandardCharsets.UTF_8), "value-ü".getBytes(StandardCharsets.UTF_8), headers),
            new SimpleRecord(1_700_000_000_005L, null, "value-2".getBytes(StandardCharsets.UTF_8)));
        ByteBuffer buffer = records.buffer();
        byte[] out = new byte[buffer.remaining()];
        buffer.duplicate().get(out);
        return out;
    }
}
