"""Transactions with confluent-kafka-python (librdkafka), for
test/interop/clients/transactions.test.ts: the same modes, arguments and
JSON lines as test/interop/java-client/src/TxnDriver.java (see there)."""
import json
import sys
import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

TIMEOUT_S = 60


def producer(bootstrap, transactional_id):
    p = Producer({'bootstrap.servers': bootstrap, 'transactional.id': transactional_id})
    p.init_transactions(TIMEOUT_S)
    return p


def consumer(bootstrap, isolation, group_id='txn-driver-reader'):
    return Consumer({
        'bootstrap.servers': bootstrap,
        'group.id': group_id,
        'isolation.level': isolation,
        'auto.offset.reset': 'earliest',
        'enable.auto.commit': False,
    })


def read_all(bootstrap, topic, isolation):
    """Every value of partition 0 up to the end offset the isolation level sees."""
    c = consumer(bootstrap, isolation)
    try:
        low, high = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=TIMEOUT_S, cached=False)
        c.assign([TopicPartition(topic, 0, 0)])
        values = []
        deadline = time.time() + TIMEOUT_S
        position = 0
        while position < high and time.time() < deadline:
            message = c.poll(0.2)
            if message is None or message.error() is not None:
                position = c.position([TopicPartition(topic, 0)])[0].offset
                continue
            values.append(message.value().decode())
            position = message.offset() + 1
        return values
    finally:
        c.close()


def write(p, topic, value, commit):
    p.begin_transaction()
    p.produce(topic, value=value, partition=0)
    p.flush(TIMEOUT_S)
    if commit:
        p.commit_transaction(TIMEOUT_S)
    else:
        p.abort_transaction(TIMEOUT_S)


def lso(bootstrap, topic):
    committed, aborted, open_, later = (producer(bootstrap, f'{topic}-{name}') for name in ('committed', 'aborted', 'open', 'later'))
    write(committed, topic, '0', True)
    write(aborted, topic, '1', False)
    open_.begin_transaction()
    open_.produce(topic, value='2', partition=0)
    open_.flush(TIMEOUT_S)
    write(later, topic, '3', True)
    print(json.dumps({'phase': 'open', 'values': read_all(bootstrap, topic, 'read_committed')}))
    open_.commit_transaction(TIMEOUT_S)
    print(json.dumps({'phase': 'committed', 'values': read_all(bootstrap, topic, 'read_committed')}))
    print(json.dumps({'phase': 'uncommitted', 'values': read_all(bootstrap, topic, 'read_uncommitted')}))


def copy(bootstrap, source, target, group, transactional_id, count, per_txn):
    p = producer(bootstrap, transactional_id)
    c = consumer(bootstrap, 'read_committed', group)
    c.subscribe([source])
    copied = 0
    transactions = 0
    deadline = time.time() + 120
    while copied < count and time.time() < deadline:
        messages = [m for m in c.consume(per_txn, 0.2) if m.error() is None]
        if not messages:
            continue
        p.begin_transaction()
        for m in messages:
            p.produce(target, key=m.key(), value=m.value().decode().upper())
        offsets = {}
        for m in messages:
            offsets[(m.topic(), m.partition())] = m.offset() + 1
        p.send_offsets_to_transaction([TopicPartition(t, part, o) for (t, part), o in offsets.items()], c.consumer_group_metadata(), TIMEOUT_S)
        p.commit_transaction(TIMEOUT_S)
        transactions += 1
        copied += len(messages)
    committed = sum(tp.offset for tp in c.committed(c.assignment(), timeout=TIMEOUT_S) if tp.offset >= 0)
    c.close()
    print(json.dumps({'copied': copied, 'transactions': transactions, 'committed': committed}))


def zombie(bootstrap, topic, transactional_id):
    old = producer(bootstrap, transactional_id)
    old.begin_transaction()
    old.produce(topic, value='zombie', partition=0)
    old.flush(TIMEOUT_S)
    fresh = producer(bootstrap, transactional_id)
    write(fresh, topic, 'fresh', True)
    zombie_error = 'none'
    try:
        old.produce(topic, value='zombie-2', partition=0)
        old.flush(TIMEOUT_S)
        old.commit_transaction(TIMEOUT_S)
    except KafkaException as e:
        zombie_error = e.args[0].name()
    print(json.dumps({'zombieError': zombie_error, 'committed': read_all(bootstrap, topic, 'read_committed')}))


def abort_invisible(bootstrap, topic, transactional_id):
    p = producer(bootstrap, transactional_id)
    write(p, topic, 'a', True)
    write(p, topic, 'b', False)
    write(p, topic, 'c', True)
    print(json.dumps({'committed': read_all(bootstrap, topic, 'read_committed'), 'uncommitted': read_all(bootstrap, topic, 'read_uncommitted')}))


if __name__ == '__main__':
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == 'lso':
        lso(*args)
    elif mode == 'copy':
        copy(*args[:5], int(args[5]), int(args[6]))
    elif mode == 'zombie':
        zombie(*args)
    elif mode == 'abort-invisible':
        abort_invisible(*args)
    else:
        raise SystemExit(f'unknown mode {mode}')
