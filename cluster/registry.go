package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/failover"
)

// TopicName names the instances topic of a service.
func TopicName(serviceID string) string {
	if serviceID == "" {
		serviceID = "default"
	}
	return "_sluice-" + serviceID + "-instances"
}

// statusVersion is the version of the Status record this package writes.
const statusVersion = 1

// Partition is one partition of a query's input an instance owns.
type Partition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// State is the partition's task state (RESTORING, RUNNING, …).
	State string `json:"state"`
}

// Status is what an instance publishes about itself.
type Status struct {
	Version int    `json:"version"`
	ID      string `json:"id"`
	// URL is where the instance serves the HTTP API
	// (http://host:port), as others should reach it.
	URL string `json:"url"`
	// Queries are the partitions it owns, per query id.
	Queries map[string][]Partition `json:"queries"`
	// Standbys are the partitions it keeps standby state for (state
	// STANDBY), per query id; it owns none of them.
	Standbys map[string][]Partition `json:"standbys,omitempty"`
	// HeartbeatMs is when it wrote this, by its own clock.
	HeartbeatMs int64 `json:"heartbeatMs"`
}

// Instance is an instance as this one knows it.
type Instance struct {
	Status
	// Self marks this instance.
	Self bool
	// Alive is false once the instance has not been heard from for
	// three heartbeat intervals.
	Alive bool
	// SeenMs is when this instance last heard from it (its own clock).
	SeenMs int64
}

// Config configures a Registry.
type Config struct {
	// ConnOpts connect to Kafka (seed brokers, TLS, SASL).
	ConnOpts   []kgo.Opt
	ServiceID  string
	InstanceID string
	// URL is this instance's advertised URL.
	URL string
	// Local reports this instance's partitions per query; it is called
	// at every publication and by Instances and Owner, so it must be
	// cheap and safe to call from any goroutine.
	Local func() map[string][]Partition
	// LocalStandbys, when set, reports this instance's standby
	// partitions per query for publication, like Local.
	LocalStandbys func() map[string][]Partition
	// OnInstances, when set, hears the instances (this one included)
	// after every publication and whenever another's status arrives: an
	// engine recomputes its standbys from it (ApplyStandbys).
	OnInstances func([]Instance)
	// Interval is the heartbeat interval. Default 2 s. Every instance of
	// a service should use the same: staleness is judged by it.
	Interval time.Duration
	Log      *slog.Logger
}

// Registry publishes this instance's Status and follows the others'.
type Registry struct {
	cfg   Config
	topic string
	cl    *kgo.Client

	mu     sync.Mutex
	others map[string]Instance

	kick   chan struct{}
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Start creates the instances topic if missing, publishes this instance's
// Status, reads what the others published so far (for at most 10 s) and
// keeps publishing and following until Close.
func Start(ctx context.Context, cfg Config) (*Registry, error) {
	if cfg.Interval <= 0 {
		cfg.Interval = 2 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Local == nil {
		cfg.Local = func() map[string][]Partition { return nil }
	}
	r := &Registry{cfg: cfg, topic: TopicName(cfg.ServiceID), others: map[string]Instance{}, kick: make(chan struct{}, 1)}
	opts := append([]kgo.Opt{}, cfg.ConnOpts...)
	opts = append(opts,
		kgo.ConsumeTopics(r.topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DefaultProduceTopic(r.topic),
		kgo.FetchMaxWait(cfg.Interval),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("instance registry: kafka client: %w", err)
	}
	r.cl = cl
	if err := r.createTopic(ctx); err != nil {
		cl.Close()
		return nil, err
	}
	if err := r.publish(ctx); err != nil {
		cl.Close()
		return nil, err
	}
	if err := r.catchUp(ctx); err != nil {
		cl.Close()
		return nil, err
	}
	loopCtx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.wg.Add(2)
	go r.follow(loopCtx)
	go r.heartbeat(loopCtx)
	return r, nil
}

func (r *Registry) createTopic(ctx context.Context) error {
	// One partition: the topic holds one small record per instance.
	cfg := map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}
	_, err := kadm.NewClient(r.cl).CreateTopic(ctx, 1, -1, cfg, r.topic)
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("instance registry: create topic %s: %w", r.topic, err)
	}
	return nil
}

// Changed asks for this instance's Status to be published soon. It never
// blocks: changes that come while a publication is pending join it.
func (r *Registry) Changed() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

func (r *Registry) status() Status {
	st := Status{Version: statusVersion, ID: r.cfg.InstanceID, URL: r.cfg.URL, Queries: r.cfg.Local(), HeartbeatMs: time.Now().UnixMilli()}
	if r.cfg.LocalStandbys != nil {
		st.Standbys = r.cfg.LocalStandbys()
	}
	return st
}

func (r *Registry) publish(ctx context.Context) error {
	b, err := json.Marshal(r.status())
	if err != nil {
		return fmt.Errorf("instance registry: encode status: %w", err)
	}
	if err := r.cl.ProduceSync(ctx, &kgo.Record{Key: []byte(r.cfg.InstanceID), Value: b}).FirstErr(); err != nil {
		return fmt.Errorf("instance registry: publish status: %w", err)
	}
	return nil
}

// heartbeat publishes every interval and on Changed.
func (r *Registry) heartbeat(ctx context.Context) {
	defer r.wg.Done()
	tick := time.NewTicker(r.cfg.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-r.kick:
		}
		pubCtx, cancel := context.WithTimeout(ctx, r.cfg.Interval*3)
		if err := r.publish(pubCtx); err != nil && ctx.Err() == nil {
			r.cfg.Log.Warn("instance registry: heartbeat not published", "err", err)
		}
		cancel()
		r.notify()
	}
}

// catchUp reads the topic up to its end as of now, so that a new
// instance knows the others before it answers.
func (r *Registry) catchUp(ctx context.Context) error {
	adm := kadm.NewClient(r.cl)
	ends, err := failover.Offsets(ctx, "list end offsets", func(ctx context.Context) (kadm.ListedOffsets, error) {
		return adm.ListEndOffsets(ctx, r.topic)
	})
	if err != nil {
		return fmt.Errorf("instance registry: end offsets of %s: %w", r.topic, err)
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			want[o.Partition] = o.Offset
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for len(want) > 0 && time.Now().Before(deadline) {
		pollCtx, cancel := context.WithDeadline(ctx, deadline)
		fs := r.cl.PollFetches(pollCtx)
		cancel()
		if ctx.Err() != nil {
			return fmt.Errorf("instance registry: read %s: %w", r.topic, ctx.Err())
		}
		fs.EachRecord(func(rec *kgo.Record) {
			r.apply(rec, time.Now())
			if rec.Offset+1 >= want[rec.Partition] {
				delete(want, rec.Partition)
			}
		})
	}
	return nil
}

// follow reads the statuses the instances publish.
func (r *Registry) follow(ctx context.Context) {
	defer r.wg.Done()
	for {
		fs := r.cl.PollFetches(ctx)
		if ctx.Err() != nil || fs.IsClientClosed() {
			return
		}
		fs.EachError(func(_ string, _ int32, err error) {
			if !errors.Is(err, context.Canceled) {
				r.cfg.Log.Warn("instance registry: read error", "topic", r.topic, "err", err)
			}
		})
		now := time.Now()
		fs.EachRecord(func(rec *kgo.Record) { r.apply(rec, now) })
		if !fs.Empty() {
			r.notify()
		}
	}
}

// notify hands the instances to Config.OnInstances.
func (r *Registry) notify() {
	if r.cfg.OnInstances != nil {
		r.cfg.OnInstances(r.Instances())
	}
}

// apply takes in one record of the topic, read at now.
func (r *Registry) apply(rec *kgo.Record, now time.Time) {
	id := string(rec.Key)
	if id == r.cfg.InstanceID {
		return // this instance knows itself better than its last record
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if rec.Value == nil {
		delete(r.others, id) // a clean stop
		return
	}
	var st Status
	if err := json.Unmarshal(rec.Value, &st); err != nil || st.Version != statusVersion {
		r.cfg.Log.Warn("instance registry: status not understood; ignored", "instance", id, "err", err)
		return
	}
	// Liveness is judged by when this instance heard the status, so that
	// clocks need not agree, except for records plainly older than the
	// staleness limit (read at start from the topic's history): those
	// count from when they were written.
	seen := now
	if rec.Timestamp.Before(now.Add(-r.staleAfter())) {
		seen = rec.Timestamp
	}
	r.others[id] = Instance{Status: st, SeenMs: seen.UnixMilli()}
}

func (r *Registry) staleAfter() time.Duration { return 3 * r.cfg.Interval }

// forgetAfter is how long a stale instance stays listed: one that
// crashed writes no tombstone.
const forgetAfter = time.Hour

// Instances lists the instances of the service, this one included,
// sorted by URL then id.
func (r *Registry) Instances() []Instance {
	now := time.Now()
	self := Instance{Status: r.status(), Self: true, Alive: true, SeenMs: now.UnixMilli()}
	out := []Instance{self}
	r.mu.Lock()
	for _, in := range r.others {
		age := now.Sub(time.UnixMilli(in.SeenMs))
		if age > forgetAfter {
			continue
		}
		in.Alive = age <= r.staleAfter()
		out = append(out, in)
	}
	r.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].URL != out[j].URL {
			return out[i].URL < out[j].URL
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Live counts the live instances of the service, this one included.
func (r *Registry) Live() int {
	n := 0
	for _, in := range r.Instances() {
		if in.Alive {
			n++
		}
	}
	return n
}

// Owner returns the live instance owning partition of topic in query's
// consumer group: this instance when it owns it, otherwise the live
// instance that says so most recently (two can during a rebalance).
func (r *Registry) Owner(query, topic string, partition int32) (Instance, bool) {
	var best Instance
	found := false
	for _, in := range r.Instances() {
		if !in.Alive || !owns(in.Queries[query], topic, partition) {
			continue
		}
		if in.Self {
			return in, true
		}
		if !found || in.HeartbeatMs > best.HeartbeatMs {
			best, found = in, true
		}
	}
	return best, found
}

// Standbys returns the live instances keeping standby state for
// partition of topic in query (num.standby.replicas), this one first when
// it is one of them, then by URL: where a pull query with standby reads
// turns when the owner cannot answer.
func (r *Registry) Standbys(query, topic string, partition int32) []Instance {
	var out []Instance
	for _, in := range r.Instances() {
		if in.Alive && owns(in.Standbys[query], topic, partition) {
			out = append(out, in)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Self && !out[j].Self })
	return out
}

func owns(ps []Partition, topic string, partition int32) bool {
	for _, p := range ps {
		if p.Topic == topic && p.Partition == partition {
			return true
		}
	}
	return false
}

// URL is this instance's advertised URL.
func (r *Registry) URL() string { return r.cfg.URL }

// Close stops publishing and following and writes this instance's
// tombstone, so the others forget it at once. Call it after the
// instance's queries stopped.
func (r *Registry) Close() error {
	r.cancel()
	r.wg.Wait()
	defer r.cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.cl.ProduceSync(ctx, &kgo.Record{Key: []byte(r.cfg.InstanceID)}).FirstErr(); err != nil {
		return fmt.Errorf("instance registry: write tombstone: %w", err)
	}
	return nil
}

// EnginePartitions reports the partitions e's persistent queries own on
// this instance: what Config.Local should return for an engine.
func EnginePartitions(e *engine.Engine) map[string][]Partition {
	out := map[string][]Partition{}
	for _, q := range e.Queries() {
		ps := []Partition{}
		for _, ti := range q.Partitions() {
			ps = append(ps, Partition{Topic: ti.Topic, Partition: ti.Partition, State: string(ti.State)})
		}
		out[q.ID] = ps
	}
	return out
}
