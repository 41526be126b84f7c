package spool.golden;

import org.apache.kafka.common.protocol.types.BoundField;
import org.apache.kafka.common.protocol.types.Schema;
import org.apache.kafka.common.protocol.types.TaggedFields;

import java.lang.reflect.Field;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.util.Collection;

/**
 * Builds a message with every field at Kafka's default, except that each
 * (non-tagged, non-null) array of structs holds one element, itself built the
 * same way. A default-constructed message has empty arrays, which would hide
 * the defaults of every nested field; one element per array shows them.
 */
final class DefaultsMessage {
    private DefaultsMessage() {}

    static Object build(Class<?> messageClass, Schema schema) throws ReflectiveOperationException {
        Object message = messageClass.getConstructor().newInstance();
        fill(message, schema);
        return message;
    }

    @SuppressWarnings("unchecked")
    private static void fill(Object struct, Schema schema) throws ReflectiveOperationException {
        for (BoundField bound : schema.fields()) {
            org.apache.kafka.common.protocol.types.Type type = bound.def.type;
            if (type instanceof TaggedFields) continue;
            boolean structArray = type.isArray() && type.arrayElementType().orElseThrow() instanceof Schema;
            if (!structArray && !(type instanceof Schema)) continue;
            Field field = struct.getClass().getDeclaredField(SchemaValues.jsonName(bound.def.name));
            field.setAccessible(true);
            Object value = field.get(struct);
            if (value == null) continue;
            if (type instanceof Schema nested) {
                fill(value, nested);
                continue;
            }
            Object element = elementClass(field).getConstructor().newInstance();
            fill(element, (Schema) type.arrayElementType().orElseThrow());
            ((Collection<Object>) value).add(element);
        }
    }

    /** The element class of a List<X> field or of an XCollection (a generic collection of X). */
    private static Class<?> elementClass(Field field) {
        Type generic = field.getGenericType();
        if (!(generic instanceof ParameterizedType)) generic = field.getType().getGenericSuperclass();
        return (Class<?>) ((ParameterizedType) generic).getActualTypeArguments()[0];
    }
}
