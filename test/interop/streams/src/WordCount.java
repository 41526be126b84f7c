// Kafka Streams word count with processing.guarantee=exactly_once_v2 (kafka-streams
// 4.4.0), for test/interop/clients/streams-eos.test.ts:
//
//   WordCount BOOTSTRAP APPLICATION_ID INPUT OUTPUT STATE_DIR
//
// Splits each input value into words and writes each word's running count
// (a Long) to OUTPUT, keyed by the word. Prints {"state":"RUNNING"} when
// the application runs and exits on SIGTERM (a clean close).
import java.util.*;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.*;
import org.apache.kafka.streams.kstream.*;

public class WordCount {
  public static void main(String[] args) throws Exception {
    Properties p = new Properties();
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, args[1]);
    p.put(StreamsConfig.STATE_DIR_CONFIG, args[4]);
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "200");
    p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, "1");
    p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, "0");
    p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.String().getClass());
    p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.String().getClass());
    p.put(StreamsConfig.consumerPrefix("session.timeout.ms"), "10000");
    p.put(StreamsConfig.producerPrefix("transaction.timeout.ms"), "10000");
    StreamsBuilder builder = new StreamsBuilder();
    builder.<String, String>stream(args[2])
        .flatMapValues(line -> Arrays.asList(line.toLowerCase(Locale.ROOT).split("\\W+")))
        .filter((key, word) -> !word.isEmpty())
        .groupBy((key, word) -> word)
        .count()
        .toStream()
        .to(args[3], Produced.with(Serdes.String(), Serdes.Long()));
    KafkaStreams streams = new KafkaStreams(builder.build(), p);
    CountDownLatch stopped = new CountDownLatch(1);
    streams.setStateListener((now, before) -> {
      System.out.println("{\"state\":\"" + now + "\"}");
      System.out.flush();
    });
    streams.setUncaughtExceptionHandler(e -> {
      System.out.println("{\"error\":\"" + String.valueOf(e).replace("\"", "'") + "\"}");
      System.out.flush();
      return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
    });
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      streams.close(java.time.Duration.ofSeconds(20));
      stopped.countDown();
    }));
    streams.start();
    stopped.await();
  }
}
