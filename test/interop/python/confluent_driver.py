"""confluent-kafka-python (librdkafka) driver for the client interop scenario.

Reads the spec (test/interop/clients/scenario.ts) from the file named by the
last argument and prints one JSON object. Phase "run": AdminClient creates the
topic; one idempotent Producer per codec (murmur2_random: Java's partitioner
for keyed records) sends keyed records with headers and explicit timestamps
and flushes; a Consumer without group.id reads each partition from the
beginning by assign(); offsets_for_times answers the spec's queries.
Phase "delete": list, describe (describe_topics where the library has it,
2.3 and later; else the topic's metadata), delete, list again.
"""
import json
import sys
import time

import confluent_kafka
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

TIMEOUT_S = 30


def now_ms():
    return int(time.time() * 1000)


def text(data):
    return None if data is None else data.decode("utf-8")


def wait_all(futures):
    for future in futures.values():
        future.result(timeout=TIMEOUT_S)


def produce(spec):
    failures = []

    def on_delivery(error, message):
        if error is not None:
            failures.append(str(error))

    for batch in spec["batches"]:
        producer = Producer({
            "bootstrap.servers": spec["bootstrap"],
            "enable.idempotence": spec["idempotent"],
            "acks": "all",
            "compression.type": batch["codec"],
            "partitioner": "murmur2_random",
            "linger.ms": 5,
        })
        for record in batch["records"]:
            producer.produce(
                spec["topic"], key=record["key"].encode(), value=record["value"].encode(),
                headers=[(name, value.encode()) for name, value in record["headers"]],
                timestamp=record["timestamp"] or 0, on_delivery=on_delivery)
        if producer.flush(TIMEOUT_S) != 0:
            raise RuntimeError("flush timed out")
    if failures:
        raise RuntimeError("delivery failed: %s" % failures)


def consume(spec):
    # The Python wrapper insists on a group.id; assign() never joins the group.
    consumer = Consumer({"bootstrap.servers": spec["bootstrap"], "group.id": "interop-unused", "enable.auto.commit": False,
                         "enable.partition.eof": False})
    consumer.assign([TopicPartition(spec["topic"], p, confluent_kafka.OFFSET_BEGINNING) for p in range(spec["partitions"])])
    consumed = []
    deadline = time.time() + TIMEOUT_S
    while len(consumed) < spec["expectedCount"] and time.time() < deadline:
        message = consumer.poll(1.0)
        if message is None:
            continue
        if message.error() is not None:
            raise RuntimeError(str(message.error()))
        kind, timestamp = message.timestamp()
        consumed.append({
            "partition": message.partition(), "offset": message.offset(),
            "key": text(message.key()), "value": text(message.value()),
            "headers": [[name, text(value)] for name, value in (message.headers() or [])],
            "timestamp": timestamp,
            "timestampType": {1: "CreateTime", 2: "LogAppendTime"}.get(kind, str(kind)),
        })
    answers = []
    for timestamp in spec["timestampQueries"]:
        found = consumer.offsets_for_times([TopicPartition(spec["topic"], p, timestamp) for p in range(spec["partitions"])], TIMEOUT_S)
        answers += [{"timestamp": timestamp, "partition": tp.partition, "offset": tp.offset} for tp in found]
    consumer.close()
    return consumed, answers


def topic_names(admin):
    return sorted(admin.list_topics(timeout=TIMEOUT_S).topics.keys())


def client_name():
    version = confluent_kafka.version()  # a (text, number) tuple before 2.x's string
    text_version = version if isinstance(version, str) else version[0]
    return "confluent-kafka-python %s, librdkafka %s" % (text_version, confluent_kafka.libversion()[0])


def run(spec):
    admin = AdminClient({"bootstrap.servers": spec["bootstrap"]})
    wait_all(admin.create_topics([NewTopic(spec["topic"], spec["partitions"], 1)]))
    start = now_ms()
    produce(spec)
    end = now_ms()
    consumed, answers = consume(spec)
    return {"client": client_name(),
            "consumed": consumed, "offsetsForTimes": answers, "produceStartMs": start, "produceEndMs": end}


def described_partitions(admin, topic):
    if hasattr(admin, "describe_topics"):
        futures = admin.describe_topics(confluent_kafka.TopicCollection([topic]), request_timeout=TIMEOUT_S)
        return len(futures[topic].result(timeout=TIMEOUT_S).partitions)
    return len(admin.list_topics(topic, timeout=TIMEOUT_S).topics[topic].partitions)


def delete(spec):
    admin = AdminClient({"bootstrap.servers": spec["bootstrap"]})
    before = topic_names(admin)
    described = described_partitions(admin, spec["topic"])
    wait_all(admin.delete_topics([spec["topic"]]))
    return {"topicsBefore": before, "describedPartitions": described, "topicsAfter": names_after_delete(admin, spec["topic"])}


def names_after_delete(admin, topic):
    # The controller answers once the delete is committed and brokers apply it asynchronously, as Kafka's do:
    # on a cluster the broker asked next may list the topic a moment longer.
    deadline = time.time() + TIMEOUT_S
    while True:
        names = topic_names(admin)
        if topic not in names or time.time() > deadline:
            return names
        time.sleep(0.05)


def main():
    with open(sys.argv[-1]) as file:
        spec = json.load(file)
    print(json.dumps(run(spec) if spec["phase"] == "run" else delete(spec)))


if __name__ == "__main__":
    main()
