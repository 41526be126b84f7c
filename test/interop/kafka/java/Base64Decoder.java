// A key/value decoder for Kafka's DumpLogSegments (--key-decoder-class,
// --value-decoder-class) that prints bytes as base64, so binary payloads stay
// on one line and tests can compare them exactly.

import java.util.Base64;

import org.apache.kafka.tools.api.Decoder;

public final class Base64Decoder implements Decoder<String> {
    @Override
    public String fromBytes(byte[] bytes) {
        return Base64.getEncoder().encodeToString(bytes);
    }
}
