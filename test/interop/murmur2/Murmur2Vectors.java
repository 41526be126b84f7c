// Prints Kafka's murmur2 of fixed byte strings, for test/client/murmur2.test.ts.
// Run: L=test/interop/kafka/lib; java -cp $L/kafka-clients-4.4.0.jar:$L/slf4j-api-1.7.36.jar test/interop/murmur2/Murmur2Vectors.java
import org.apache.kafka.common.utils.Utils;
import java.nio.charset.StandardCharsets;

public class Murmur2Vectors {
    public static void main(String[] args) {
        String[] texts = {"", "a", "ab", "abc", "abcd", "abcde", "key-0", "key-1", "key-42", "hello world",
            "The quick brown fox jumps over the lazy dog", "\u00e9t\u00e9 \u2603"};
        for (String text : texts) {
            byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
            print("utf8:" + text, bytes);
        }
        print("hex:ff80007f", new byte[] {(byte) 0xff, (byte) 0x80, 0x00, 0x7f});
        print("hex:fffefdfcfbfaf9", new byte[] {(byte) 0xff, (byte) 0xfe, (byte) 0xfd, (byte) 0xfc, (byte) 0xfb, (byte) 0xfa, (byte) 0xf9});
    }

    static void print(String label, byte[] bytes) {
        int hash = Utils.murmur2(bytes);
        System.out.println(label + "\t" + hash + "\t" + (Utils.toPositive(hash) % 3) + "\t" + (Utils.toPositive(hash) % 7));
    }
}
