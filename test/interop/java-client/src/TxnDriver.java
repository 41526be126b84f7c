// Transactions with the real Java client (kafka-clients 4.4.0), for
// test/interop/clients/transactions.test.ts. Each mode prints JSON lines.
//
//   lso BOOTSTRAP TOPIC
//     Four transactional producers write one record each to partition 0 of
//     TOPIC: "0" committed, "1" aborted, "2" left open, "3" committed. A
//     read_committed consumer reads up to its end offset (the LSO), prints
//     {"phase":"open",...}; the open transaction commits; it reads again and
//     prints {"phase":"committed",...}; a read_uncommitted consumer prints
//     {"phase":"uncommitted",...}.
//   copy BOOTSTRAP IN OUT GROUP TXNID COUNT PER_TXN
//     Consume-transform-produce: a group consumer (read_committed) reads IN,
//     a transactional producer writes each value upper-cased to OUT, with the
//     consumed offsets sent in the transaction (sendOffsetsToTransaction),
//     committing every PER_TXN records, until COUNT records were copied.
//     Prints {"copied":N,"transactions":T,"committed":C}, C the sum of the
//     group's committed offsets (OffsetFetch, require_stable) at the end.
//   zombie BOOTSTRAP TOPIC TXNID
//     Producer A opens a transaction and sends "zombie"; producer B with the
//     same transactional.id initializes (fencing A, aborting its
//     transaction), sends "fresh" and commits; A's commit fails. Prints
//     {"zombieError":"<exception class>","committed":[values read_committed]}.
//   abort-invisible BOOTSTRAP TOPIC TXNID
//     One producer commits "a", aborts "b", commits "c"; prints the values a
//     read_committed and a read_uncommitted consumer see.
//   read BOOTSTRAP TOPIC
//     Prints what abort-invisible prints, without writing.
import java.time.Duration;
import java.util.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class TxnDriver {
  public static void main(String[] args) throws Exception {
    switch (args[0]) {
      case "lso" -> lso(args[1], args[2]);
      case "copy" -> copy(args[1], args[2], args[3], args[4], args[5], Integer.parseInt(args[6]), Integer.parseInt(args[7]));
      case "zombie" -> zombie(args[1], args[2], args[3]);
      case "abort-invisible" -> abortInvisible(args[1], args[2], args[3]);
      case "read" -> printVisible(args[1], args[2]);
      default -> throw new IllegalArgumentException("unknown mode " + args[0]);
    }
  }

  static KafkaProducer<String, String> producer(String bootstrap, String transactionalId) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "60000");
    KafkaProducer<String, String> producer = new KafkaProducer<>(p);
    producer.initTransactions();
    return producer;
  }

  static KafkaConsumer<String, String> consumer(String bootstrap, String isolation, String groupId) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    if (groupId != null) p.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
    return new KafkaConsumer<>(p);
  }

  /** Every value of partition 0 up to the end offset the consumer's isolation level sees. */
  static List<String> readAll(String bootstrap, String topic, String isolation) {
    try (KafkaConsumer<String, String> consumer = consumer(bootstrap, isolation, null)) {
      TopicPartition tp = new TopicPartition(topic, 0);
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      long end = consumer.endOffsets(List.of(tp)).get(tp);
      List<String> values = new ArrayList<>();
      long deadline = System.currentTimeMillis() + 60_000;
      while (consumer.position(tp) < end && System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) values.add(r.value());
      }
      return values;
    }
  }

  static String json(List<String> values) {
    StringBuilder b = new StringBuilder("[");
    for (int i = 0; i < values.size(); i++) b.append(i == 0 ? "" : ",").append('"').append(values.get(i)).append('"');
    return b.append(']').toString();
  }

  static void lso(String bootstrap, String topic) throws Exception {
    KafkaProducer<String, String> committed = producer(bootstrap, topic + "-committed");
    KafkaProducer<String, String> aborted = producer(bootstrap, topic + "-aborted");
    KafkaProducer<String, String> open = producer(bootstrap, topic + "-open");
    KafkaProducer<String, String> later = producer(bootstrap, topic + "-later");
    write(committed, topic, "0", true);
    write(aborted, topic, "1", false);
    open.beginTransaction();
    open.send(new ProducerRecord<>(topic, 0, null, "2")).get();
    write(later, topic, "3", true);
    System.out.println("{\"phase\":\"open\",\"values\":" + json(readAll(bootstrap, topic, "read_committed")) + "}");
    open.commitTransaction();
    System.out.println("{\"phase\":\"committed\",\"values\":" + json(readAll(bootstrap, topic, "read_committed")) + "}");
    System.out.println("{\"phase\":\"uncommitted\",\"values\":" + json(readAll(bootstrap, topic, "read_uncommitted")) + "}");
    for (KafkaProducer<String, String> p : List.of(committed, aborted, open, later)) p.close();
  }

  static void write(KafkaProducer<String, String> producer, String topic, String value, boolean commit) throws Exception {
    producer.beginTransaction();
    producer.send(new ProducerRecord<>(topic, 0, null, value)).get();
    if (commit) producer.commitTransaction();
    else producer.abortTransaction();
  }

  static void copy(String bootstrap, String in, String out, String group, String txnId, int count, int perTxn) throws Exception {
    KafkaProducer<String, String> producer = producer(bootstrap, txnId);
    KafkaConsumer<String, String> consumer = consumer(bootstrap, "read_committed", group);
    consumer.subscribe(List.of(in));
    int copied = 0;
    int transactions = 0;
    long deadline = System.currentTimeMillis() + 120_000;
    while (copied < count && System.currentTimeMillis() < deadline) {
      ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
      if (records.isEmpty()) continue;
      producer.beginTransaction();
      Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
      int inTxn = 0;
      for (ConsumerRecord<String, String> r : records) {
        producer.send(new ProducerRecord<>(out, r.key(), r.value().toUpperCase()));
        offsets.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
        inTxn++;
        if (inTxn >= perTxn) break;
      }
      producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
      producer.commitTransaction();
      transactions++;
      copied += inTxn;
      // What was polled beyond this transaction is read again from the committed offsets.
      for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) consumer.seek(e.getKey(), e.getValue().offset());
      for (TopicPartition tp : records.partitions()) if (!offsets.containsKey(tp)) consumer.seek(tp, records.records(tp).get(0).offset());
    }
    long committed = 0;
    for (OffsetAndMetadata offset : consumer.committed(consumer.assignment()).values()) committed += offset == null ? 0 : offset.offset();
    consumer.close();
    producer.close();
    System.out.println("{\"copied\":" + copied + ",\"transactions\":" + transactions + ",\"committed\":" + committed + "}");
  }

  static void zombie(String bootstrap, String topic, String txnId) throws Exception {
    KafkaProducer<String, String> zombie = producer(bootstrap, txnId);
    zombie.beginTransaction();
    zombie.send(new ProducerRecord<>(topic, 0, null, "zombie")).get();
    KafkaProducer<String, String> fresh = producer(bootstrap, txnId);
    write(fresh, topic, "fresh", true);
    String zombieError = "none";
    try {
      zombie.send(new ProducerRecord<>(topic, 0, null, "zombie-2")).get();
      zombie.commitTransaction();
    } catch (Exception e) {
      Throwable cause = e instanceof java.util.concurrent.ExecutionException && e.getCause() != null ? e.getCause() : e;
      zombieError = cause.getClass().getSimpleName();
    }
    zombie.close(Duration.ZERO);
    fresh.close();
    System.out.println("{\"zombieError\":\"" + zombieError + "\",\"committed\":" + json(readAll(bootstrap, topic, "read_committed")) + "}");
  }

  static void abortInvisible(String bootstrap, String topic, String txnId) throws Exception {
    KafkaProducer<String, String> producer = producer(bootstrap, txnId);
    write(producer, topic, "a", true);
    write(producer, topic, "b", false);
    write(producer, topic, "c", true);
    producer.close();
    printVisible(bootstrap, topic);
  }

  static void printVisible(String bootstrap, String topic) {
    System.out.println("{\"committed\":" + json(readAll(bootstrap, topic, "read_committed")) + ",\"uncommitted\":" + json(readAll(bootstrap, topic, "read_uncommitted")) + "}");
  }
}
