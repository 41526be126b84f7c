// franz-go transactions driver for test/interop/clients/transactions.test.ts:
// the same modes, arguments and JSON lines as
// test/interop/java-client/src/TxnDriver.java (see there).
//
//	franz-txn lso BOOTSTRAP TOPIC
//	franz-txn abort-invisible BOOTSTRAP TOPIC TXNID
//	franz-txn zombie BOOTSTRAP TOPIC TXNID
//	franz-txn copy BOOTSTRAP IN OUT GROUP TXNID COUNT PER_TXN
//
// Transactions use kgo's BeginTransaction / EndTransaction; copy uses
// kgo.GroupTransactSession (consume-transform-produce, offsets committed in
// each transaction). Reads run to the end offset the isolation level sees
// (the last stable offset for read_committed, from kadm.ListCommittedOffsets),
// counting control records (kgo.KeepControlRecords) so the position passes
// the markers as the Java consumer's does.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

const timeout = 60 * time.Second

func main() {
	if len(os.Args) < 2 {
		fail(fmt.Errorf("usage: franz-txn MODE ARGS"))
	}
	args := os.Args[2:]
	var err error
	switch os.Args[1] {
	case "lso":
		err = lso(args[0], args[1])
	case "abort-invisible":
		err = abortInvisible(args[0], args[1], args[2])
	case "zombie":
		err = zombie(args[0], args[1], args[2])
	case "copy":
		count, _ := strconv.Atoi(args[5])
		perTxn, _ := strconv.Atoi(args[6])
		err = copyRecords(args[0], args[1], args[2], args[3], args[4], count, perTxn)
	default:
		err = fmt.Errorf("unknown mode %s", os.Args[1])
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

func emit(value any) {
	line, _ := json.Marshal(value)
	fmt.Println(string(line))
}

func producer(bootstrap, transactionalID string) (*kgo.Client, error) {
	return kgo.NewClient(
		kgo.SeedBrokers(bootstrap),
		kgo.TransactionalID(transactionalID),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.AllowAutoTopicCreation(),
	)
}

func ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), timeout)
}

// write runs one transaction of one record to partition 0, committed or aborted.
func write(cl *kgo.Client, topic, value string, commit bool) error {
	c, cancel := ctx()
	defer cancel()
	if err := cl.BeginTransaction(); err != nil {
		return err
	}
	if err := cl.ProduceSync(c, &kgo.Record{Topic: topic, Partition: 0, Value: []byte(value)}).FirstErr(); err != nil {
		return err
	}
	end := kgo.TryAbort
	if commit {
		end = kgo.TryCommit
	}
	return cl.EndTransaction(c, end)
}

// readAll returns every value of partition 0 up to the end offset the isolation level sees.
func readAll(bootstrap, topic string, committed bool) ([]string, error) {
	c, cancel := ctx()
	defer cancel()
	admin, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	adm := kadm.NewClient(admin)
	var listed kadm.ListedOffsets
	if committed {
		listed, err = adm.ListCommittedOffsets(c, topic)
	} else {
		listed, err = adm.ListEndOffsets(c, topic)
	}
	if err != nil {
		return nil, err
	}
	offset, ok := listed.Lookup(topic, 0)
	if !ok || offset.Err != nil {
		return nil, fmt.Errorf("end offset of %s-0: %v", topic, offset.Err)
	}
	end := offset.Offset
	isolation := kgo.ReadUncommitted()
	if committed {
		isolation = kgo.ReadCommitted()
	}
	consumer, err := kgo.NewClient(
		kgo.SeedBrokers(bootstrap),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(isolation),
		kgo.KeepControlRecords(),
	)
	if err != nil {
		return nil, err
	}
	defer consumer.Close()
	values := []string{}
	position := int64(0)
	for position < end {
		fetches := consumer.PollFetches(c)
		if c.Err() != nil {
			return nil, fmt.Errorf("read %s-0 to %d: stopped at %d: %w", topic, end, position, c.Err())
		}
		for _, fetchErr := range fetches.Errors() {
			return nil, fetchErr.Err
		}
		fetches.EachRecord(func(r *kgo.Record) {
			position = r.Offset + 1
			if !r.Attrs.IsControl() && r.Offset < end {
				values = append(values, string(r.Value))
			}
		})
	}
	return values, nil
}

func lso(bootstrap, topic string) error {
	clients := map[string]*kgo.Client{}
	for _, name := range []string{"committed", "aborted", "open", "later"} {
		cl, err := producer(bootstrap, topic+"-"+name)
		if err != nil {
			return err
		}
		defer cl.Close()
		clients[name] = cl
	}
	if err := write(clients["committed"], topic, "0", true); err != nil {
		return err
	}
	if err := write(clients["aborted"], topic, "1", false); err != nil {
		return err
	}
	open := clients["open"]
	if err := open.BeginTransaction(); err != nil {
		return err
	}
	c, cancel := ctx()
	defer cancel()
	if err := open.ProduceSync(c, &kgo.Record{Topic: topic, Partition: 0, Value: []byte("2")}).FirstErr(); err != nil {
		return err
	}
	if err := write(clients["later"], topic, "3", true); err != nil {
		return err
	}
	for _, phase := range []string{"open", "committed", "uncommitted"} {
		if phase == "committed" {
			if err := open.EndTransaction(c, kgo.TryCommit); err != nil {
				return err
			}
		}
		values, err := readAll(bootstrap, topic, phase != "uncommitted")
		if err != nil {
			return err
		}
		emit(map[string]any{"phase": phase, "values": values})
	}
	return nil
}

func abortInvisible(bootstrap, topic, transactionalID string) error {
	cl, err := producer(bootstrap, transactionalID)
	if err != nil {
		return err
	}
	defer cl.Close()
	for _, step := range []struct {
		value  string
		commit bool
	}{{"a", true}, {"b", false}, {"c", true}} {
		if err := write(cl, topic, step.value, step.commit); err != nil {
			return err
		}
	}
	committed, err := readAll(bootstrap, topic, true)
	if err != nil {
		return err
	}
	uncommitted, err := readAll(bootstrap, topic, false)
	if err != nil {
		return err
	}
	emit(map[string]any{"committed": committed, "uncommitted": uncommitted})
	return nil
}

// errorName is the Kafka error name a failure carries (PRODUCER_FENCED, ...), else its text.
func errorName(err error) string {
	var kafkaErr *kerr.Error
	if errors.As(err, &kafkaErr) {
		return kafkaErr.Message
	}
	return err.Error()
}

func zombie(bootstrap, topic, transactionalID string) error {
	old, err := producer(bootstrap, transactionalID)
	if err != nil {
		return err
	}
	defer old.Close()
	c, cancel := ctx()
	defer cancel()
	if err := old.BeginTransaction(); err != nil {
		return err
	}
	if err := old.ProduceSync(c, &kgo.Record{Topic: topic, Partition: 0, Value: []byte("zombie")}).FirstErr(); err != nil {
		return err
	}
	fresh, err := producer(bootstrap, transactionalID)
	if err != nil {
		return err
	}
	defer fresh.Close()
	if err := write(fresh, topic, "fresh", true); err != nil {
		return err
	}
	zombieError := "none"
	if err := old.ProduceSync(c, &kgo.Record{Topic: topic, Partition: 0, Value: []byte("zombie-2")}).FirstErr(); err != nil {
		zombieError = errorName(err)
	}
	if err := old.EndTransaction(c, kgo.TryCommit); err != nil && zombieError == "none" {
		zombieError = errorName(err)
	}
	committed, err := readAll(bootstrap, topic, true)
	if err != nil {
		return err
	}
	emit(map[string]any{"zombieError": zombieError, "committed": committed})
	return nil
}

func copyRecords(bootstrap, source, target, group, transactionalID string, count, perTxn int) error {
	session, err := kgo.NewGroupTransactSession(
		kgo.SeedBrokers(bootstrap),
		kgo.TransactionalID(transactionalID),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(source),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RequireStableFetchOffsets(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.AllowAutoTopicCreation(),
	)
	if err != nil {
		return err
	}
	c, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	copied, transactions := 0, 0
	for copied < count && c.Err() == nil {
		fetches := session.PollRecords(c, perTxn)
		if c.Err() != nil {
			break
		}
		for _, fetchErr := range fetches.Errors() {
			return fetchErr.Err
		}
		records := fetches.Records()
		if len(records) == 0 {
			continue
		}
		if err := session.Begin(); err != nil {
			return err
		}
		out := make([]*kgo.Record, 0, len(records))
		for _, r := range records {
			out = append(out, &kgo.Record{Topic: target, Key: r.Key, Value: []byte(strings.ToUpper(string(r.Value)))})
		}
		produceErr := session.ProduceSync(c, out...).FirstErr()
		committed, err := session.End(c, produceErr == nil)
		if err != nil {
			return err
		}
		if committed {
			transactions++
			copied += len(records)
		}
	}
	session.Close()
	admin, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		return err
	}
	defer admin.Close()
	offsets, err := kadm.NewClient(admin).FetchOffsets(context.Background(), group)
	if err != nil {
		return err
	}
	committedTotal := int64(0)
	offsets.Each(func(o kadm.OffsetResponse) {
		if o.Err == nil && o.At >= 0 {
			committedTotal += o.At
		}
	})
	emit(map[string]any{"copied": copied, "transactions": transactions, "committed": committedTotal})
	return nil
}
