// A group member for the group interop tests (test/interop/groups/), written
// with franz-go's kgo.ConsumerGroup.
//
//	franz-group '<config json>'
//
// The config: bootstrap, group, topic, clientId, protocol ("classic": the
// client-side balancer named by assignor, default cooperative-sticky;
// "consumer": KIP-848 through kgo.ServerSideBalancer, with the sticky
// balancer (server assignor "uniform") or, for assignor "range", the range
// balancer), sessionTimeoutMs and heartbeatIntervalMs (classic only).
// Auto-commit is off and rebalances are blocked while a poll's records are
// handled: the member prints one line per record, commits exactly those
// records (CommitRecords, synchronous), then allows rebalancing again. One
// JSON object per line (see group-scenario.ts): started, assignment (the full
// set, whenever it changed), record, committed, commitFailed, closed.
// SIGTERM closes the client (leaving the group) and exits 0.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

type config struct {
	Bootstrap           string  `json:"bootstrap"`
	Group               string  `json:"group"`
	Topic               string  `json:"topic"`
	ClientID            string  `json:"clientId"`
	Protocol            string  `json:"protocol"`
	Assignor            *string `json:"assignor"`
	SessionTimeoutMs    int     `json:"sessionTimeoutMs"`
	HeartbeatIntervalMs int     `json:"heartbeatIntervalMs"`
}

var (
	out      = json.NewEncoder(os.Stdout)
	outMu    sync.Mutex
	assigned = map[int32]bool{}
)

func emit(event string, fields map[string]any) {
	outMu.Lock()
	defer outMu.Unlock()
	fields["event"] = event
	if err := out.Encode(fields); err != nil {
		os.Exit(2)
	}
}

func showAssignment() {
	partitions := []int32{}
	for p := range assigned {
		partitions = append(partitions, p)
	}
	sort.Slice(partitions, func(i, j int) bool { return partitions[i] < partitions[j] })
	emit("assignment", map[string]any{"partitions": partitions})
}

func change(topic string, add bool) func(context.Context, *kgo.Client, map[string][]int32) {
	return func(_ context.Context, _ *kgo.Client, partitions map[string][]int32) {
		for _, p := range partitions[topic] {
			if add {
				assigned[p] = true
			} else {
				delete(assigned, p)
			}
		}
		showAssignment()
	}
}

func balancer(c *config) kgo.GroupBalancer {
	name := "cooperative-sticky"
	if c.Assignor != nil {
		name = *c.Assignor
	}
	if c.Protocol == "consumer" {
		if name == "range" {
			return kgo.RangeBalancer()
		}
		return kgo.StickyBalancer()
	}
	switch name {
	case "range":
		return kgo.RangeBalancer()
	case "roundrobin":
		return kgo.RoundRobinBalancer()
	case "sticky":
		return kgo.StickyBalancer()
	case "cooperative-sticky":
		return kgo.CooperativeStickyBalancer()
	}
	fail(fmt.Errorf("unknown assignor %q", name))
	return nil
}

func options(c *config) []kgo.Opt {
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.Bootstrap),
		kgo.ClientID(c.ClientID),
		kgo.ConsumerGroup(c.Group),
		kgo.ConsumeTopics(c.Topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.Balancers(balancer(c)),
		kgo.OnPartitionsAssigned(change(c.Topic, true)),
		kgo.OnPartitionsRevoked(change(c.Topic, false)),
		kgo.OnPartitionsLost(change(c.Topic, false)),
	}
	if c.Protocol == "consumer" {
		return append(opts, kgo.ServerSideBalancer())
	}
	return append(opts,
		kgo.SessionTimeout(time.Duration(c.SessionTimeoutMs)*time.Millisecond),
		kgo.HeartbeatInterval(time.Duration(c.HeartbeatIntervalMs)*time.Millisecond))
}

func main() {
	var c config
	if err := json.Unmarshal([]byte(os.Args[len(os.Args)-1]), &c); err != nil {
		fail(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	client, err := kgo.NewClient(options(&c)...)
	if err != nil {
		fail(err)
	}
	emit("started", map[string]any{"client": "franz-go " + franzVersion()})
	for ctx.Err() == nil {
		fetches := client.PollFetches(ctx)
		handle(ctx, client, fetches)
		client.AllowRebalance()
	}
	client.Close()
	emit("closed", map[string]any{})
}

func handle(ctx context.Context, client *kgo.Client, fetches kgo.Fetches) {
	fetches.EachError(func(topic string, partition int32, err error) {
		if ctx.Err() == nil {
			emit("clientError", map[string]any{"message": fmt.Sprintf("%s/%d: %v", topic, partition, err)})
		}
	})
	records := fetches.Records()
	if len(records) == 0 {
		return
	}
	next := map[int32]int64{}
	for _, r := range records {
		emit("record", map[string]any{"partition": r.Partition, "offset": r.Offset})
		if r.Offset+1 > next[r.Partition] {
			next[r.Partition] = r.Offset + 1
		}
	}
	pairs := [][2]int64{}
	for p, o := range next {
		pairs = append(pairs, [2]int64{int64(p), o})
	}
	sort.Slice(pairs, func(i, j int) bool { return pairs[i][0] < pairs[j][0] })
	// A commit started before SIGTERM finishes: the context here is not the signal's.
	commitCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := client.CommitRecords(commitCtx, records...); err != nil {
		emit("commitFailed", map[string]any{"message": err.Error(), "offsets": pairs})
		return
	}
	emit("committed", map[string]any{"offsets": pairs})
}

func franzVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/twmb/franz-go" {
				return dep.Version
			}
		}
	}
	return "unknown"
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "franz-group:", err)
	os.Exit(1)
}
