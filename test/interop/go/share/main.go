// franz-go share-consumer driver (kgo.ShareGroup, KIP-932) for
// test/interop/clients/share-consumers.test.ts: the modes "consume" and
// "hold" of test/interop/java-client/src/ShareDriver.java, with the same
// arguments and output lines (see there); producing and setting the group's
// share.auto.offset.reset stay with the Java driver.
//
//	franz-share consume BOOTSTRAP GROUP TOPIC NAME POISON
//	franz-share hold BOOTSTRAP GROUP TOPIC NAME
//
// consume marks each record of a poll AckAccept, the value POISON ("-" for
// none) AckRelease, then FlushAcks; the ShareAckCallback's per-partition
// errors are printed as "commit NAME ERROR", else the accepted values as
// "acked NAME VALUE...". Fetches are limited to 10 records
// (ShareMaxRecords + ShareMaxRecordsStrict) so that several consumers share
// one partition's records.
package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

const maxRecords = 10

func main() {
	if len(os.Args) < 6 {
		fail(fmt.Errorf("usage: franz-share consume|hold BOOTSTRAP GROUP TOPIC NAME [POISON]"))
	}
	mode, bootstrap, group, topic, name := os.Args[1], os.Args[2], os.Args[3], os.Args[4], os.Args[5]
	var err error
	switch mode {
	case "consume":
		if len(os.Args) < 7 {
			fail(fmt.Errorf("consume needs POISON"))
		}
		err = consume(bootstrap, group, topic, name, os.Args[6])
	case "hold":
		err = hold(bootstrap, group, topic, name)
	default:
		err = fmt.Errorf("unknown mode %s", mode)
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

// ackErrors collects what the ShareAckCallback reports between two flushes.
type ackErrors struct {
	mu     sync.Mutex
	errors []string
}

func (a *ackErrors) take() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	taken := a.errors
	a.errors = nil
	return taken
}

func shareClient(bootstrap, group, topic, name string, acks *ackErrors) (*kgo.Client, error) {
	return kgo.NewClient(
		kgo.SeedBrokers(bootstrap),
		kgo.ClientID(name),
		kgo.ShareGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.ShareMaxRecords(maxRecords),
		kgo.ShareMaxRecordsStrict(),
		kgo.ShareAckCallback(func(_ *kgo.Client, results kgo.ShareAckResults) {
			acks.mu.Lock()
			defer acks.mu.Unlock()
			for _, result := range results {
				if result.Err != nil {
					acks.errors = append(acks.errors, fmt.Sprintf("%T:%v", result.Err, strings.ReplaceAll(result.Err.Error(), " ", "_")))
				}
			}
		}),
	)
}

func describe(r *kgo.Record) string {
	return fmt.Sprintf("%d %d %s %d", r.Partition, r.Offset, r.Value, r.DeliveryCount())
}

// stopOnStdin cancels the returned context when stdin says "stop" or closes.
func stopOnStdin() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer cancel()
		scanner := bufio.NewScanner(os.Stdin)
		for scanner.Scan() {
			if strings.TrimSpace(scanner.Text()) == "stop" {
				return
			}
		}
	}()
	return ctx
}

func consume(bootstrap, group, topic, name, poison string) error {
	acks := &ackErrors{}
	cl, err := shareClient(bootstrap, group, topic, name, acks)
	if err != nil {
		return err
	}
	fmt.Printf("subscribed %s\n", name)
	ctx := stopOnStdin()
	for ctx.Err() == nil {
		fetches := cl.PollRecords(ctx, maxRecords)
		var accepted strings.Builder
		fetches.EachRecord(func(r *kgo.Record) {
			fmt.Printf("rec %s %s\n", name, describe(r))
			if string(r.Value) == poison {
				r.Ack(kgo.AckRelease)
				return
			}
			r.Ack(kgo.AckAccept)
			accepted.WriteString(" " + string(r.Value))
		})
		fetches.EachError(func(t string, p int32, err error) {
			if err != context.Canceled {
				fmt.Fprintf(os.Stderr, "fetch %s/%d: %v\n", t, p, err)
			}
		})
		if fetches.NumRecords() == 0 {
			continue
		}
		// FlushAcks returns once every ack was answered and the callback ran; not cancelled by "stop", so
		// the acks of the last poll are confirmed too.
		if err := cl.FlushAcks(context.Background()); err != nil {
			return err
		}
		failures := acks.take()
		for _, failure := range failures {
			fmt.Printf("commit %s %s\n", name, failure)
		}
		if len(failures) == 0 && accepted.Len() > 0 {
			fmt.Printf("acked %s%s\n", name, accepted.String())
		}
	}
	cl.Close()
	fmt.Printf("closed %s\n", name)
	return nil
}

func hold(bootstrap, group, topic, name string) error {
	acks := &ackErrors{}
	cl, err := shareClient(bootstrap, group, topic, name, acks)
	if err != nil {
		return err
	}
	fmt.Printf("subscribed %s\n", name)
	for {
		fetches := cl.PollRecords(context.Background(), maxRecords)
		if fetches.NumRecords() == 0 {
			continue
		}
		fetches.EachRecord(func(r *kgo.Record) { fmt.Printf("held %s %s\n", name, describe(r)) })
		break
	}
	// Keep the member alive (kgo heartbeats on its own goroutine) without acknowledging or polling: a poll
	// would accept the held records.
	select {}
}
