"""confluent-kafka-python's ShareConsumer (librdkafka's share consumer,
KIP-932) as a driver for test/interop/clients/share-consumers.test.ts: the
modes "consume" and "hold" of test/interop/java-client/src/ShareDriver.java,
with the same arguments and output lines (see there); producing and setting
the group's share.auto.offset.reset stay with the Java driver.

  share_driver.py consume BOOTSTRAP GROUP TOPIC NAME POISON
  share_driver.py hold BOOTSTRAP GROUP TOPIC NAME

consume runs in explicit acknowledgement mode: each record ACCEPT, the value
POISON ("-" for none) RELEASE, then commit_sync; a partition whose result is
an exception is printed as "commit NAME ERROR", else the accepted values as
"acked NAME VALUE...". max.poll.records is 10 so that several consumers share
one partition's records.
"""
import sys
import threading

from confluent_kafka import AcknowledgeType, ShareConsumer

MAX_POLL_RECORDS = 10


def say(line):
    print(line, flush=True)


def share_consumer(bootstrap, group, name):
    return ShareConsumer({
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "client.id": name,
        "share.acknowledgement.mode": "explicit",
        "max.poll.records": MAX_POLL_RECORDS,
    })


def describe(message):
    return f"{message.partition()} {message.offset()} {message.value().decode()} {message.delivery_count()}"


def records(messages):
    for message in messages:
        if message.error() is not None:
            print(f"poll error: {message.error()}", file=sys.stderr, flush=True)
            continue
        yield message


def consume(bootstrap, group, topic, name, poison):
    stop = threading.Event()

    def watch_stdin():
        for line in sys.stdin:
            if line.strip() == "stop":
                break
        stop.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    consumer = share_consumer(bootstrap, group, name)
    consumer.subscribe([topic])
    say(f"subscribed {name}")
    while not stop.is_set():
        messages = consumer.poll(0.2)
        accepted = []
        for message in records(messages):
            say(f"rec {name} {describe(message)}")
            value = message.value().decode()
            release = value == poison
            consumer.acknowledge(message, AcknowledgeType.RELEASE if release else AcknowledgeType.ACCEPT)
            if not release:
                accepted.append(value)
        if len(messages) == 0:
            continue
        failed = False
        for error in consumer.commit_sync().values():
            if error is None:
                continue
            failed = True
            say(f"commit {name} {type(error).__name__}:{str(error).replace(' ', '_')}")
        if not failed and accepted:
            say(f"acked {name} {' '.join(accepted)}")
    consumer.close()
    say(f"closed {name}")


def hold(bootstrap, group, topic, name):
    consumer = share_consumer(bootstrap, group, name)
    consumer.subscribe([topic])
    say(f"subscribed {name}")
    while True:
        held = list(records(consumer.poll(0.2)))
        if held:
            break
    for message in held:
        say(f"held {name} {describe(message)}")
    # Neither acknowledge nor poll again (librdkafka heartbeats on its own thread): the locks run out.
    threading.Event().wait()


def main():
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "consume":
        consume(*args[:5])
    elif mode == "hold":
        hold(*args[:4])
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
