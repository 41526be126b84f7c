// A group member for the group interop tests (test/interop/groups/), written
// with franz-go's kgo.ConsumerGroup.
//
//	franz-group '<config json>'
//
// The config: bootstrap, group, topic, clientId, protocol ("classic": the
// client-side balancer named by assignor, default cooperative-sticky;
// "consumer": KIP-848 through kgo.ServerSideBalancer, with the sticky
// balancer (server assignor "uniform") or, for assignor "range", the range
// balancer), sessionTimeoutMs and heartbeatIntervalMs (classic only);
// optionally security (a secured listener: protocol SASL_SSL with
// SCRAM-SHA-512 username/password, or SSL with the client certificate's
// certPath/keyPath; caPath for both) and produce (values the member produces
// with acks=all before it joins, then prints "produced").
// Auto-commit is off and rebalances are blocked while a poll's records are
// handled: the member prints one line per record, commits exactly those
// records (CommitRecords, synchronous), then allows rebalancing again. One
// JSON object per line (see group-scenario.ts): started, assignment (the full
// set, whenever it changed), record, committed, commitFailed, closed.
// SIGTERM closes the client (leaving the group) and exits 0.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
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
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

type security struct {
	Protocol string `json:"protocol"`
	CAPath   string `json:"caPath"`
	CertPath string `json:"certPath"`
	KeyPath  string `json:"keyPath"`
	Username string `json:"username"`
	Password string `json:"password"`
}

type config struct {
	Bootstrap           string    `json:"bootstrap"`
	Group               string    `json:"group"`
	Topic               string    `json:"topic"`
	ClientID            string    `json:"clientId"`
	Protocol            string    `json:"protocol"`
	Assignor            *string   `json:"assignor"`
	SessionTimeoutMs    int       `json:"sessionTimeoutMs"`
	HeartbeatIntervalMs int       `json:"heartbeatIntervalMs"`
	Security            *security `json:"security"`
	Produce             []string  `json:"produce"`
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

// securityOptions dials TLS (with the client's certificate for mTLS) and, for
// SASL_SSL, authenticates with SCRAM-SHA-512.
func securityOptions(s *security) []kgo.Opt {
	if s == nil {
		return nil
	}
	ca, err := os.ReadFile(s.CAPath)
	if err != nil {
		fail(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		fail(fmt.Errorf("no certificate in %s", s.CAPath))
	}
	config := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	if s.Protocol == "SSL" {
		certificate, err := tls.LoadX509KeyPair(s.CertPath, s.KeyPath)
		if err != nil {
			fail(err)
		}
		config.Certificates = []tls.Certificate{certificate}
		return []kgo.Opt{kgo.DialTLSConfig(config)}
	}
	auth := scram.Auth{User: s.Username, Pass: s.Password}
	return []kgo.Opt{kgo.DialTLSConfig(config), kgo.SASL(auth.AsSha512Mechanism())}
}

// produce sends the values (acks=all) and waits for every acknowledgement.
func produce(ctx context.Context, c *config) {
	opts := append([]kgo.Opt{kgo.SeedBrokers(c.Bootstrap), kgo.ClientID(c.ClientID), kgo.RequiredAcks(kgo.AllISRAcks())}, securityOptions(c.Security)...)
	producer, err := kgo.NewClient(opts...)
	if err != nil {
		fail(err)
	}
	defer producer.Close()
	records := make([]*kgo.Record, 0, len(c.Produce))
	for _, value := range c.Produce {
		records = append(records, &kgo.Record{Topic: c.Topic, Value: []byte(value)})
	}
	if err := producer.ProduceSync(ctx, records...).FirstErr(); err != nil {
		fail(err)
	}
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
	opts = append(opts, securityOptions(c.Security)...)
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
	emit("started", map[string]any{"client": "franz-go " + franzVersion()})
	if c.Produce != nil {
		produce(ctx, &c)
		emit("produced", map[string]any{"count": len(c.Produce)})
	}
	client, err := kgo.NewClient(options(&c)...)
	if err != nil {
		fail(err)
	}
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
		emit("record", map[string]any{"partition": r.Partition, "offset": r.Offset, "value": string(r.Value)})
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
