"""A group member for the group interop tests (test/interop/groups/), written
with confluent-kafka-python (librdkafka) or kafka-python.

    python3 group_consumer.py '<config json>'

The config names the library ("confluent" or "kafka-python"), bootstrap,
group, topic, clientId, protocol ("classic" or "consumer"), assignor
(partition.assignment.strategy for classic, group.remote.assignor for
consumer; null: the client's default), sessionTimeoutMs and
heartbeatIntervalMs (classic only); optionally security (a secured listener:
protocol SASL_SSL with SCRAM-SHA-512 username/password, or SSL with the client
certificate's certPath/keyPath; caPath for both) and produce (values the
member produces with acks=all before it subscribes, then prints "produced").
Auto-commit is off: after each poll the
member prints one line per record and then commits exactly those records
(next offset per partition) synchronously. It prints one JSON object per
line (see group-scenario.ts): started, assignment (the full set, whenever it
changed), record, committed, commitFailed, closed. SIGTERM closes the
consumer (leaving the group) and exits 0.
"""
import json
import signal
import sys

stopping = False


def emit(event, **fields):
    fields["event"] = event
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


def on_sigterm(_signum, _frame):
    global stopping
    stopping = True


def librdkafka_security(security):
    """librdkafka's settings for a secured listener (none for PLAINTEXT)."""
    if security is None:
        return {}
    if security["protocol"] == "SSL":
        return {"security.protocol": "ssl", "ssl.ca.location": security["caPath"],
                "ssl.certificate.location": security["certPath"], "ssl.key.location": security["keyPath"]}
    return {"security.protocol": "sasl_ssl", "ssl.ca.location": security["caPath"], "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": security["username"], "sasl.password": security["password"]}


def kafka_python_security(security):
    """kafka-python's options for a secured listener (none for PLAINTEXT)."""
    if security is None:
        return {}
    options = {"security_protocol": security["protocol"], "ssl_cafile": security["caPath"], "ssl_check_hostname": True}
    if security["protocol"] == "SSL":
        options.update(ssl_certfile=security["certPath"], ssl_keyfile=security["keyPath"])
    else:
        options.update(sasl_mechanism="SCRAM-SHA-512", sasl_plain_username=security["username"],
                       sasl_plain_password=security["password"])
    return options


class Confluent:
    def __init__(self, config):
        import confluent_kafka
        self.ck = confluent_kafka
        self.topic = config["topic"]
        self.security = librdkafka_security(config.get("security"))
        self.bootstrap = config["bootstrap"]
        conf = {
            **self.security,
            "bootstrap.servers": config["bootstrap"],
            "group.id": config["group"],
            "client.id": config["clientId"],
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "group.protocol": config["protocol"],
        }
        if config["protocol"] == "classic":
            conf["session.timeout.ms"] = config["sessionTimeoutMs"]
            conf["heartbeat.interval.ms"] = config["heartbeatIntervalMs"]
            if config.get("assignor"):
                conf["partition.assignment.strategy"] = config["assignor"]
        elif config.get("assignor"):
            conf["group.remote.assignor"] = config["assignor"]
        if self.ck.libversion()[1] < 0x020400ff:
            # librdkafka before 2.4 has no group.protocol (classic is the only one).
            if conf.pop("group.protocol") != "classic":
                raise RuntimeError("librdkafka %s has no group.protocol=consumer" % self.ck.libversion()[0])
        self.conf = conf

    def produce(self, values):
        failures = []

        def on_delivery(error, _message):
            if error is not None:
                failures.append(str(error))

        producer = self.ck.Producer({"bootstrap.servers": self.bootstrap, "acks": "all", **self.security})
        for value in values:
            producer.produce(self.topic, value=value.encode(), on_delivery=on_delivery)
        if producer.flush(30) != 0:
            raise RuntimeError("flush timed out")
        if failures:
            raise RuntimeError("delivery failed: %s" % failures)

    def subscribe(self):
        self.consumer = self.ck.Consumer(self.conf)
        self.consumer.subscribe([self.topic])

    def version(self):
        version = self.ck.version()  # a (text, number) tuple before 2.x's string
        return "confluent-kafka-python %s, librdkafka %s" % (version if isinstance(version, str) else version[0], self.ck.libversion()[0])

    def poll(self):
        records = []
        for message in self.consumer.consume(num_messages=500, timeout=0.2):
            if message.error() is not None:
                emit("clientError", message=str(message.error()))
                continue
            value = message.value()
            records.append((message.partition(), message.offset(), None if value is None else value.decode()))
        return records

    def assignment(self):
        return [tp.partition for tp in self.consumer.assignment()]

    def commit(self, offsets):
        self.consumer.commit(offsets=[self.ck.TopicPartition(self.topic, p, o) for p, o in offsets.items()], asynchronous=False)

    def close(self):
        self.consumer.close()


class KafkaPython:
    def __init__(self, config):
        import kafka
        self.kafka = kafka
        self.topic = config["topic"]
        self.security = kafka_python_security(config.get("security"))
        self.bootstrap = config["bootstrap"]
        options = {
            **self.security,
            "bootstrap_servers": config["bootstrap"],
            "group_id": config["group"],
            "client_id": config["clientId"],
            "enable_auto_commit": False,
            "auto_offset_reset": "earliest",
            "session_timeout_ms": config["sessionTimeoutMs"],
            "heartbeat_interval_ms": config["heartbeatIntervalMs"],
        }
        if config["protocol"] != "classic":
            raise RuntimeError("kafka-python has only the classic group protocol")
        if config.get("assignor"):
            from kafka.coordinator.assignors.range import RangePartitionAssignor
            from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
            options["partition_assignment_strategy"] = [
                {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor}[config["assignor"]]]
        self.options = options

    def produce(self, values):
        producer = self.kafka.KafkaProducer(bootstrap_servers=self.bootstrap, acks="all", **self.security)
        for future in [producer.send(self.topic, value=value.encode()) for value in values]:
            future.get(timeout=30)
        producer.close()

    def subscribe(self):
        self.consumer = self.kafka.KafkaConsumer(**self.options)
        self.consumer.subscribe([self.topic])

    def version(self):
        return "kafka-python %s" % self.kafka.__version__

    def poll(self):
        records = []
        for batch in self.consumer.poll(timeout_ms=200).values():
            records += [(record.partition, record.offset, None if record.value is None else record.value.decode())
                        for record in batch]
        return records

    def assignment(self):
        return [tp.partition for tp in self.consumer.assignment()]

    def commit(self, offsets):
        from kafka.structs import OffsetAndMetadata, TopicPartition
        fields = len(OffsetAndMetadata._fields)
        # kafka-python 2.1+ added leader_epoch to OffsetAndMetadata.
        meta = (lambda o: OffsetAndMetadata(o, "")) if fields == 2 else (lambda o: OffsetAndMetadata(o, "", -1))
        self.consumer.commit({TopicPartition(self.topic, p): meta(o) for p, o in offsets.items()})

    def close(self):
        self.consumer.close()


def main():
    config = json.loads(sys.argv[-1])
    signal.signal(signal.SIGTERM, on_sigterm)
    member = (Confluent if config["library"] == "confluent" else KafkaPython)(config)
    emit("started", client=member.version())
    if config.get("produce") is not None:
        member.produce(config["produce"])
        emit("produced", count=len(config["produce"]))
    member.subscribe()
    shown = None
    while not stopping:
        records = member.poll()
        # The assignment first: records of a partition assigned during this poll follow its line.
        assigned = sorted(member.assignment())
        if assigned != shown:
            shown = assigned
            emit("assignment", partitions=assigned)
        for partition, offset, value in records:
            emit("record", partition=partition, offset=offset, value=value)
        if not records:
            continue
        offsets = {}
        for partition, offset, _value in records:
            offsets[partition] = max(offsets.get(partition, 0), offset + 1)
        try:
            member.commit(offsets)
            emit("committed", offsets=sorted(offsets.items()))
        except Exception as error:  # a failed commit is reported; its records may come again
            emit("commitFailed", message=str(error), offsets=sorted(offsets.items()))
    member.close()
    emit("closed")


if __name__ == "__main__":
    main()
