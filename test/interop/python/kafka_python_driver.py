"""kafka-python driver for the client interop scenario.

Reads the spec (test/interop/clients/scenario.ts) from the file named by the
last argument and prints one JSON object. Phase "run": KafkaAdminClient
creates the topic; one KafkaProducer per codec (kafka-python 2.0 has no
idempotent producer, so acks=all without it; its default partitioner is
Java's murmur2) sends keyed records with headers and explicit timestamps and
flushes; a KafkaConsumer without group_id reads each partition from the
beginning by assign(); offsets_for_times answers the spec's queries.
Phase "delete": list, describe, delete, list again.
"""
import json
import sys
import time

import kafka
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic

TIMEOUT_S = 30


def now_ms():
    return int(time.time() * 1000)


def text(data):
    return None if data is None else data.decode("utf-8")


def produce(spec):
    for batch in spec["batches"]:
        codec = None if batch["codec"] == "none" else batch["codec"]
        # kafka-python 2.0 does not retry by default (the Java producer does): on a cluster, the leader of a
        # partition just created may not have applied it yet and answers NOT_LEADER_OR_FOLLOWER, a retriable
        # error. One request in flight keeps the order across a retry.
        producer = KafkaProducer(bootstrap_servers=spec["bootstrap"], acks="all", compression_type=codec, linger_ms=5,
                                 retries=5, max_in_flight_requests_per_connection=1)
        futures = [
            producer.send(spec["topic"], key=record["key"].encode(), value=record["value"].encode(),
                          headers=[(name, value.encode()) for name, value in record["headers"]],
                          timestamp_ms=record["timestamp"])
            for record in batch["records"]
        ]
        producer.flush(TIMEOUT_S)
        for future in futures:
            future.get(timeout=TIMEOUT_S)
        producer.close()


def consume(spec):
    consumer = KafkaConsumer(bootstrap_servers=spec["bootstrap"], group_id=None, enable_auto_commit=False)
    partitions = [TopicPartition(spec["topic"], p) for p in range(spec["partitions"])]
    consumer.assign(partitions)
    consumer.seek_to_beginning(*partitions)
    consumed = []
    deadline = time.time() + TIMEOUT_S
    while len(consumed) < spec["expectedCount"] and time.time() < deadline:
        for records in consumer.poll(timeout_ms=1000).values():
            for message in records:
                consumed.append({
                    "partition": message.partition, "offset": message.offset,
                    "key": text(message.key), "value": text(message.value),
                    "headers": [[name, text(value)] for name, value in message.headers],
                    "timestamp": message.timestamp,
                    "timestampType": {0: "CreateTime", 1: "LogAppendTime"}.get(message.timestamp_type, str(message.timestamp_type)),
                })
    answers = []
    for timestamp in spec["timestampQueries"]:
        found = consumer.offsets_for_times({tp: timestamp for tp in partitions})
        answers += [{"timestamp": timestamp, "partition": tp.partition, "offset": None if at is None else at.offset}
                    for tp, at in sorted(found.items(), key=lambda item: item[0].partition)]
    consumer.close()
    return consumed, answers


def run(spec):
    admin = KafkaAdminClient(bootstrap_servers=spec["bootstrap"])
    admin.create_topics([NewTopic(spec["topic"], spec["partitions"], 1)])
    admin.close()
    start = now_ms()
    produce(spec)
    end = now_ms()
    consumed, answers = consume(spec)
    return {"client": "kafka-python %s" % kafka.__version__, "consumed": consumed, "offsetsForTimes": answers,
            "produceStartMs": start, "produceEndMs": end}


def delete(spec):
    admin = KafkaAdminClient(bootstrap_servers=spec["bootstrap"])
    before = sorted(admin.list_topics())
    described = len(admin.describe_topics([spec["topic"]])[0]["partitions"])
    admin.delete_topics([spec["topic"]])
    # The controller answers once the delete is committed and brokers apply it asynchronously, as Kafka's do:
    # on a cluster the broker asked next may list the topic a moment longer.
    deadline = time.time() + TIMEOUT_S
    after = sorted(admin.list_topics())
    while spec["topic"] in after and time.time() < deadline:
        time.sleep(0.05)
        after = sorted(admin.list_topics())
    admin.close()
    return {"topicsBefore": before, "describedPartitions": described, "topicsAfter": after}


def main():
    with open(sys.argv[-1]) as file:
        spec = json.load(file)
    print(json.dumps(run(spec) if spec["phase"] == "run" else delete(spec)))


if __name__ == "__main__":
    main()
