// franz-go driver for Spool's client interop scenario
// (test/interop/clients/scenario.ts describes the spec and the JSON printed).
//
//	franz-driver <spec.json>
//
// Phase "run": kadm creates the topic; one client per codec produces the
// codec's keyed records with headers and explicit timestamps (franz-go's
// producer is idempotent by default; acks=all; its default partitioner
// hashes keys with Kafka's murmur2); a client with ConsumePartitions reads
// every partition from the start (direct assignment, no group); a raw
// ListOffsets request (kmsg) answers the timestamp queries as Kafka returns
// them. Phase "delete": list, describe, delete, list again.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type specRecord struct {
	Key       string      `json:"key"`
	Value     string      `json:"value"`
	Headers   [][2]string `json:"headers"`
	Timestamp *int64      `json:"timestamp"`
}

type spec struct {
	Phase      string `json:"phase"`
	Bootstrap  string `json:"bootstrap"`
	Topic      string `json:"topic"`
	Partitions int32  `json:"partitions"`
	Idempotent bool   `json:"idempotent"`
	Batches    []struct {
		Codec   string       `json:"codec"`
		Records []specRecord `json:"records"`
	} `json:"batches"`
	ExpectedCount    int     `json:"expectedCount"`
	TimestampQueries []int64 `json:"timestampQueries"`
}

type consumed struct {
	Partition     int32       `json:"partition"`
	Offset        int64       `json:"offset"`
	Key           *string     `json:"key"`
	Value         *string     `json:"value"`
	Headers       [][2]string `json:"headers"`
	Timestamp     int64       `json:"timestamp"`
	TimestampType string      `json:"timestampType"`
}

type answer struct {
	Timestamp int64  `json:"timestamp"`
	Partition int32  `json:"partition"`
	Offset    *int64 `json:"offset"`
}

var codecs = map[string]kgo.CompressionCodec{
	"none":   kgo.NoCompression(),
	"gzip":   kgo.GzipCompression(),
	"snappy": kgo.SnappyCompression(),
	"lz4":    kgo.Lz4Compression(),
	"zstd":   kgo.ZstdCompression(),
}

func main() {
	var s spec
	data, err := os.ReadFile(os.Args[len(os.Args)-1])
	check(err)
	check(json.Unmarshal(data, &s))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out any
	if s.Phase == "run" {
		out = run(ctx, &s)
	} else {
		out = deleteTopic(ctx, &s)
	}
	check(json.NewEncoder(os.Stdout).Encode(out))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "franz-driver:", err)
		os.Exit(1)
	}
}

func newClient(s *spec, opts ...kgo.Opt) *kgo.Client {
	client, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(s.Bootstrap)}, opts...)...)
	check(err)
	return client
}

func run(ctx context.Context, s *spec) map[string]any {
	admin := newClient(s)
	created, err := kadm.NewClient(admin).CreateTopic(ctx, s.Partitions, 1, nil, s.Topic)
	check(err)
	check(created.Err)
	admin.Close()
	start := time.Now().UnixMilli()
	for _, batch := range s.Batches {
		produce(ctx, s, batch.Codec, batch.Records)
	}
	end := time.Now().UnixMilli()
	return map[string]any{
		"client":          "franz-go " + franzVersion(),
		"consumed":        consume(ctx, s),
		"offsetsForTimes": offsetsForTimes(ctx, s),
		"produceStartMs":  start,
		"produceEndMs":    end,
	}
}

func produce(ctx context.Context, s *spec, codec string, records []specRecord) {
	opts := []kgo.Opt{kgo.ProducerBatchCompression(codecs[codec]), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(5 * time.Millisecond)}
	if !s.Idempotent {
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	client := newClient(s, opts...)
	defer client.Close()
	var batch []*kgo.Record
	for _, r := range records {
		record := &kgo.Record{Topic: s.Topic, Key: []byte(r.Key), Value: []byte(r.Value), Timestamp: time.UnixMilli(*r.Timestamp)}
		for _, h := range r.Headers {
			record.Headers = append(record.Headers, kgo.RecordHeader{Key: h[0], Value: []byte(h[1])})
		}
		batch = append(batch, record)
	}
	check(client.ProduceSync(ctx, batch...).FirstErr())
}

func consume(ctx context.Context, s *spec) []consumed {
	partitions := map[int32]kgo.Offset{}
	for p := int32(0); p < s.Partitions; p++ {
		partitions[p] = kgo.NewOffset().AtStart()
	}
	client := newClient(s, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{s.Topic: partitions}))
	defer client.Close()
	var out []consumed
	for len(out) < s.ExpectedCount && ctx.Err() == nil {
		fetches := client.PollFetches(ctx)
		fetches.EachError(func(topic string, partition int32, err error) { check(fmt.Errorf("%s-%d: %w", topic, partition, err)) })
		fetches.EachRecord(func(r *kgo.Record) {
			key, value := string(r.Key), string(r.Value)
			record := consumed{Partition: r.Partition, Offset: r.Offset, Key: &key, Value: &value, Headers: [][2]string{}, Timestamp: r.Timestamp.UnixMilli(), TimestampType: "CreateTime"}
			if r.Attrs.TimestampType() == 1 {
				record.TimestampType = "LogAppendTime"
			}
			for _, h := range r.Headers {
				record.Headers = append(record.Headers, [2]string{h.Key, string(h.Value)})
			}
			out = append(out, record)
		})
	}
	return out
}

func offsetsForTimes(ctx context.Context, s *spec) []answer {
	client := newClient(s)
	defer client.Close()
	var out []answer
	for _, timestamp := range s.TimestampQueries {
		request := kmsg.NewPtrListOffsetsRequest()
		topic := kmsg.NewListOffsetsRequestTopic()
		topic.Topic = s.Topic
		for p := int32(0); p < s.Partitions; p++ {
			partition := kmsg.NewListOffsetsRequestTopicPartition()
			partition.Partition = p
			partition.Timestamp = timestamp
			topic.Partitions = append(topic.Partitions, partition)
		}
		request.Topics = append(request.Topics, topic)
		response, err := request.RequestWith(ctx, client)
		check(err)
		for _, t := range response.Topics {
			for _, p := range t.Partitions {
				check(kerrOf(p.ErrorCode))
				offset := p.Offset
				out = append(out, answer{Timestamp: timestamp, Partition: p.Partition, Offset: &offset})
			}
		}
	}
	return out
}

func kerrOf(code int16) error {
	if code != 0 {
		return fmt.Errorf("ListOffsets error code %d", code)
	}
	return nil
}

func deleteTopic(ctx context.Context, s *spec) map[string]any {
	// kadm answers ListTopics from metadata cached for MetadataMinAge (5 s by default).
	client := newClient(s, kgo.MetadataMinAge(10*time.Millisecond))
	defer client.Close()
	admin := kadm.NewClient(client)
	before, err := admin.ListTopics(ctx)
	check(err)
	described, err := admin.ListTopics(ctx, s.Topic)
	check(err)
	deleted, err := admin.DeleteTopics(ctx, s.Topic)
	check(err)
	check(deleted.Error())
	time.Sleep(20 * time.Millisecond) // past MetadataMinAge, so the list below is a fresh Metadata request
	after, err := admin.ListTopics(ctx)
	check(err)
	return map[string]any{
		"topicsBefore":        sorted(before.Names()),
		"describedPartitions": len(described[s.Topic].Partitions),
		"topicsAfter":         sorted(after.Names()),
	}
}

func sorted(names []string) []string {
	sort.Strings(names)
	return names
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
