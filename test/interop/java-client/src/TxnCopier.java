// The transactional copier of Kafka's system tests (ducktape's
// TransactionalMessageCopier), for test/interop/clients/txn-bounce.test.ts,
// with the real Java client (kafka-clients 4.4.0):
//
//   TxnCopier BOOTSTRAP IN PARTITION OUT GROUP TXNID PER_TXN [PAUSE_MS]
//
// Reads partition PARTITION of IN (assign, read_committed, from GROUP's
// committed offset) and writes every record, key and value unchanged, to
// OUT in transactions of up to PER_TXN records, each with the consumed
// offset committed in it (sendOffsetsToTransaction). After each commit it
// prints {"committed":<next offset to copy>}; once that offset reaches the
// end of the partition it prints {"done":true} and exits 0. On any error it
// prints {"error":"<class>: <message>"} and exits 3: the test starts a new
// copier with the same transactional id, which fences this one's producer
// and aborts its open transaction, and resumes from the committed offset.
// PAUSE_MS (default 0) waits that long after each commit, so that a test's
// bounces fall while copying goes on.
import java.time.Duration;
import java.util.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class TxnCopier {
  public static void main(String[] args) {
    String bootstrap = args[0];
    TopicPartition input = new TopicPartition(args[1], Integer.parseInt(args[2]));
    String output = args[3];
    String group = args[4];
    String txnId = args[5];
    int perTxn = Integer.parseInt(args[6]);
    long pauseMs = args.length > 7 ? Long.parseLong(args[7]) : 0;
    try {
      KafkaConsumer<String, String> consumer = consumer(bootstrap, group, perTxn);
      KafkaProducer<String, String> producer = producer(bootstrap, txnId);
      producer.initTransactions();
      consumer.assign(List.of(input));
      copy(consumer, producer, input, output, perTxn, pauseMs);
      producer.close(Duration.ofSeconds(10));
      consumer.close(CloseOptions.timeout(Duration.ofSeconds(10)));
      System.out.println("{\"done\":true}");
    } catch (Exception e) {
      // No close: an error ends the copier as a crash would, and the next one fences it.
      System.out.println("{\"error\":\"" + (e.getClass().getName() + ": " + e.getMessage()).replace("\\", "\\\\").replace("\"", "'") + "\"}");
      System.out.flush();
      System.exit(3);
    }
  }

  static void copy(KafkaConsumer<String, String> consumer, KafkaProducer<String, String> producer, TopicPartition input, String output, int perTxn, long pauseMs) throws InterruptedException {
    for (;;) {
      long end = consumer.endOffsets(List.of(input)).get(input);
      if (consumer.position(input) >= end) return;
      producer.beginTransaction();
      int copied = 0;
      while (copied < perTxn && consumer.position(input) < end) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
          producer.send(new ProducerRecord<>(output, r.key(), r.value()));
          copied++;
        }
      }
      long next = consumer.position(input);
      producer.sendOffsetsToTransaction(Map.of(input, new OffsetAndMetadata(next)), consumer.groupMetadata());
      producer.commitTransaction();
      System.out.println("{\"committed\":" + next + "}");
      System.out.flush();
      if (pauseMs > 0) Thread.sleep(pauseMs);
    }
  }

  static KafkaConsumer<String, String> consumer(String bootstrap, String group, int perTxn) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, String.valueOf(perTxn));
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
    return new KafkaConsumer<>(p);
  }

  static KafkaProducer<String, String> producer(String bootstrap, String txnId) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId);
    p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "20000");
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "30000");
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    return new KafkaProducer<>(p);
  }
}
