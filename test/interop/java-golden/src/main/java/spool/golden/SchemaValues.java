package spool.golden;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.BinaryNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.types.BoundField;
import org.apache.kafka.common.protocol.types.Field;
import org.apache.kafka.common.protocol.types.Schema;
import org.apache.kafka.common.protocol.types.TaggedFields;
import org.apache.kafka.common.protocol.types.Type;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;

/**
 * Builds a JSON value for one version of a message, driven only by Kafka's
 * own wire schema for that version (the generated classes' SCHEMAS[version]),
 * so every field the version carries gets a value and no other field does.
 * The JSON is then turned into the real message object by Kafka's generated
 * JsonConverter.read, which maps each camelCase JSON name onto the Java field.
 *
 * Values are chosen away from Kafka's defaults: negative and extreme
 * integers, non-ASCII and long strings, random UUIDs and bytes, a real record
 * batch, nulls where the version allows them, empty and 1-3 element arrays,
 * and tagged fields mostly set (sometimes left at default, so omitted).
 */
final class SchemaValues {
    /** Arrays nested this deep (0 = top level) are left empty, to keep samples small. */
    private static final int ARRAY_DEPTH_MAX = 3;

    private static final String[] STRINGS = {
        "spool",
        "тема-ü",
        "主题-日本語",
        "emoji-🎉-𝄞",
        "",
        "a.b_c-D9",
        // Longer than 127 bytes, so compact lengths take a two-byte varint.
        "ünïcödé-".repeat(12),
    };

    private final Random random;
    private final byte[] recordBatch;
    /**
     * While set, primitives take values that are commonly some field's
     * default (0, -1, "", false, the zero UUID, empty bytes). Used for one
     * tagged field in four: Kafka writes a tagged field only when it differs
     * from Kafka's default, and Spool re-encodes it only when it differs from
     * Spool's, so a default that Spool declares differently from Kafka shows
     * up as a byte mismatch.
     */
    private boolean nearDefaults = false;
    /**
     * When not null, every field takes the near-default value with this
     * choice (0: zeros, true; 1: minus ones, false), arrays hold one element,
     * nothing is null and every tagged field is set: the deterministic form
     * of the check above.
     */
    private final Integer fixedPick;

    SchemaValues(Random random, byte[] recordBatch) {
        this(random, recordBatch, null);
    }

    private SchemaValues(Random random, byte[] recordBatch, Integer fixedPick) {
        this.random = random;
        this.recordBatch = recordBatch;
        this.fixedPick = fixedPick;
        this.nearDefaults = fixedPick != null;
    }

    static SchemaValues nearDefaults(int pick) {
        return new SchemaValues(new Random(pick), new byte[0], pick);
    }

    ObjectNode struct(Schema schema, int depth) {
        ObjectNode node = JsonNodeFactory.instance.objectNode();
        for (BoundField bound : schema.fields()) {
            Field field = bound.def;
            if (field.type instanceof TaggedFields tagged) {
                for (Map.Entry<Integer, Field> entry : tagged.fields().entrySet()) {
                    // One tagged field in four stays at its default and so is not written.
                    if (fixedPick == null && random.nextInt(4) == 0) continue;
                    Field taggedField = entry.getValue();
                    boolean outer = nearDefaults;
                    nearDefaults = outer || random.nextInt(3) == 0;
                    node.set(jsonName(taggedField.name), value(taggedField.type, depth));
                    nearDefaults = outer;
                }
                continue;
            }
            node.set(jsonName(field.name), value(field.type, depth));
        }
        return node;
    }

    static boolean isFlexible(Schema schema) {
        for (BoundField bound : schema.fields()) {
            if (bound.def.type instanceof TaggedFields) return true;
        }
        return false;
    }

    /**
     * Kafka's wire schema names are snake_case forms of the JSON names, but
     * not reversibly ("KRaftVersionFeature" becomes "kraft_version_feature").
     * The generated classes' instance fields carry the exact camelCase JSON
     * names, so the name is looked up among them, ignoring case and '_'.
     */
    static String jsonName(String snake) {
        String name = JSON_NAMES.get(normalize(snake));
        if (name == null) throw new IllegalStateException("no message class has a field for " + snake);
        return name;
    }

    private static final Map<String, String> JSON_NAMES = new HashMap<>();

    /** Learns the field names of a generated message class and its nested struct classes. */
    static void learnNames(Class<?> messageClass) {
        for (java.lang.reflect.Field field : messageClass.getDeclaredFields()) {
            if (java.lang.reflect.Modifier.isStatic(field.getModifiers()) || field.getName().startsWith("_")) continue;
            String previous = JSON_NAMES.putIfAbsent(normalize(field.getName()), field.getName());
            if (previous != null && !previous.equals(field.getName())) {
                throw new IllegalStateException("ambiguous field names " + previous + " and " + field.getName());
            }
        }
        for (Class<?> nested : messageClass.getDeclaredClasses()) learnNames(nested);
    }

    private static String normalize(String name) {
        return name.replace("_", "").toLowerCase(java.util.Locale.ROOT);
    }

    private JsonNode value(Type type, int depth) {
        if (fixedPick == null && type.isNullable() && random.nextInt(4) == 0) return NullNode.instance;
        if (type.isArray()) return array(type.arrayElementType().orElseThrow(), depth);
        if (type instanceof Schema schema) return struct(schema, depth);
        return primitive(type);
    }

    private ArrayNode array(Type element, int depth) {
        ArrayNode node = JsonNodeFactory.instance.arrayNode();
        int count = depth >= ARRAY_DEPTH_MAX ? 0 : fixedPick != null ? 1 : random.nextInt(4);
        for (int i = 0; i < count; i++) node.add(value(element, depth + 1));
        return node;
    }

    private static String typeName(Type type) {
        return type instanceof Type.DocumentedType documented ? documented.typeName() : type.toString();
    }

    private JsonNode primitive(Type type) {
        return nearDefaults ? nearDefault(typeName(type)) : primitive(typeName(type));
    }

    private JsonNode nearDefault(String name) {
        JsonNodeFactory json = JsonNodeFactory.instance;
        int pick = fixedPick != null ? fixedPick : random.nextInt(2);
        switch (name) {
            case "BOOLEAN": return json.booleanNode(pick == 0);
            case "INT8": return json.numberNode((byte) -pick);
            case "INT16": return json.numberNode((short) -pick);
            case "INT32": return json.numberNode(-pick);
            case "INT64": return json.numberNode((long) -pick);
            case "UINT16": return json.numberNode(pick == 0 ? 0 : 65535);
            case "UINT32": return json.numberNode(pick == 0 ? 0L : 0xffffffffL);
            case "FLOAT64": return json.numberNode(pick == 0 ? 0.0 : -1.0);
            case "UUID": return json.textNode(Uuid.ZERO_UUID.toString());
            case "STRING":
            case "COMPACT_STRING":
            case "NULLABLE_STRING":
            case "COMPACT_NULLABLE_STRING":
                return json.textNode("");
            default:
                return fixedPick != null ? new BinaryNode(new byte[0]) : primitive(name);
        }
    }

    private JsonNode primitive(String name) {
        JsonNodeFactory json = JsonNodeFactory.instance;
        switch (name) {
            case "BOOLEAN":
                return json.booleanNode(random.nextBoolean());
            case "INT8":
                return json.numberNode((byte) (random.nextInt(255) - 127));
            case "INT16":
                return json.numberNode((short) (random.nextInt(65535) - 32767));
            case "UINT16":
                return json.numberNode(1 + random.nextInt(65535));
            case "INT32":
                return json.numberNode(int32());
            case "UINT32":
                return json.numberNode(1L + (random.nextLong() & 0xffffffffL) % 0xffffffffL);
            case "INT64":
                return json.numberNode(int64());
            case "FLOAT64":
                return json.numberNode(float64());
            case "UUID":
                return json.textNode(new Uuid(random.nextLong(), random.nextLong()).toString());
            case "STRING":
            case "COMPACT_STRING":
            case "NULLABLE_STRING":
            case "COMPACT_NULLABLE_STRING":
                return json.textNode(STRINGS[random.nextInt(STRINGS.length)]);
            case "BYTES":
            case "COMPACT_BYTES":
            case "NULLABLE_BYTES":
            case "COMPACT_NULLABLE_BYTES":
                return new BinaryNode(bytes(random.nextInt(4) == 0 ? 0 : 1 + random.nextInt(200)));
            case "RECORDS":
            case "COMPACT_RECORDS":
            case "NULLABLE_RECORDS":
            case "COMPACT_NULLABLE_RECORDS":
                return new BinaryNode(random.nextInt(4) == 0 ? new byte[0] : recordBatch);
            default:
                throw new IllegalStateException("no generator for wire type " + name);
        }
    }

    private int int32() {
        switch (random.nextInt(4)) {
            case 0: return -1 - random.nextInt(1000);
            case 1: return Integer.MIN_VALUE + random.nextInt(3);
            default: return random.nextInt();
        }
    }

    /**
     * Spool reads int64 as a JavaScript number: safe integers, plus Kafka's
     * Long.MAX_VALUE / MIN_VALUE sentinels. Only those are generated.
     */
    private long int64() {
        long safeMax = (1L << 53) - 1;
        switch (random.nextInt(8)) {
            case 0: return Long.MAX_VALUE;
            case 1: return Long.MIN_VALUE;
            case 2: return -1 - random.nextInt(1000);
            case 3: return safeMax - random.nextInt(3);
            default: return (random.nextLong() % safeMax);
        }
    }

    private double float64() {
        switch (random.nextInt(4)) {
            case 0: return -0.5;
            case 1: return 1.0e300 * random.nextDouble();
            default: return (random.nextDouble() - 0.5) * 2000.0;
        }
    }

    byte[] bytes(int length) {
        byte[] out = new byte[length];
        random.nextBytes(out);
        return out;
    }
}
