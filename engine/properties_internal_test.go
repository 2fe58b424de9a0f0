package engine

import (
	"strconv"
	"testing"
	"time"
)

// TestShowPropertiesIsWhatRuns checks that SHOW PROPERTIES gives the
// settings a query's runner is configured with, for the defaults and for
// values set under either name.
func TestShowPropertiesIsWhatRuns(t *testing.T) {
	e := &Engine{instanceID: "i1"}
	for _, props := range []map[string]string{
		nil,
		{"processing.guarantee": "exactly_once_v2"},
		{"ksql.streams.processing.guarantee": "exactly_once"},
		{"processing.guarantee": "exactly_once_v2", "ksql.streams.commit.interval.ms": "250"},
		{"commit.interval.ms": "40", "auto.offset.reset": "earliest", "num.stream.threads": "3", "sluice.stall.timeout": "2s"},
		{"statestore.cache.max.bytes": "0"},
		{"ksql.streams.statestore.cache.max.bytes": "4096"},
		// Malformed values from a request run, and show, as the defaults.
		{"commit.interval.ms": "abc", "num.stream.threads": "0", "auto.offset.reset": "middle"},
	} {
		shown := map[string]string{}
		for _, p := range e.propertyList(props, nil).Properties {
			shown[p.Name] = p.Value
		}
		cfg := e.kafkaConfig("g", false, nil, props)
		ran := map[string]string{
			"commit.interval.ms":   strconv.FormatInt(cfg.CommitInterval.Milliseconds(), 10),
			"auto.offset.reset":    cfg.ResetOffset,
			"num.stream.threads":   strconv.Itoa(cfg.Threads),
			"sluice.stall.timeout": cfg.StallTimeout.String(),
		}
		for name, v := range ran {
			if shown[name] != v {
				t.Errorf("%v: SHOW PROPERTIES says %s is %q, the runner has %q", props, name, shown[name], v)
			}
		}
		// The planner takes the cache's 0 (off) as below 0.
		if n := stateCacheBytes(props); strconv.FormatInt(max(n, 0), 10) != shown["statestore.cache.max.bytes"] {
			t.Errorf("%v: SHOW PROPERTIES says statestore.cache.max.bytes is %q, the planner has %d", props, shown["statestore.cache.max.bytes"], n)
		}
		if eos := shown["processing.guarantee"] != "at_least_once"; eos != cfg.ExactlyOnce {
			t.Errorf("%v: SHOW PROPERTIES says processing.guarantee is %q, the runner's exactly-once is %v", props, shown["processing.guarantee"], cfg.ExactlyOnce)
		}
	}
}

// TestTransientQueryCommitInterval: a transient query never runs
// exactly-once, so under an exactly-once session it commits at
// at-least-once's interval unless one is set.
func TestTransientQueryCommitInterval(t *testing.T) {
	e := &Engine{instanceID: "i1"}
	for _, tc := range []struct {
		props map[string]string
		want  time.Duration
	}{
		{map[string]string{"processing.guarantee": "exactly_once_v2"}, time.Second},
		{map[string]string{"processing.guarantee": "exactly_once_v2", "commit.interval.ms": "300"}, 300 * time.Millisecond},
	} {
		cfg := e.kafkaConfig("g", true, nil, tc.props)
		if cfg.ExactlyOnce || cfg.CommitInterval != tc.want {
			t.Errorf("%v: exactly once %v, commit interval %v; want false, %v", tc.props, cfg.ExactlyOnce, cfg.CommitInterval, tc.want)
		}
	}
}

// TestShowMalformedProperty: a malformed value from a request is listed
// as the default when its readers run with the default, and as it was set
// when they refuse it.
func TestShowMalformedProperty(t *testing.T) {
	props := map[string]string{"commit.interval.ms": "abc", "sluice.hot.key.share": "2", "sluice.table.retention": "soon"}
	shown := map[string]string{}
	for _, p := range (&Engine{}).propertyList(props, props).Properties {
		shown[p.Name] = p.Value
		if _, set := props[p.Name]; p.Overridden != set {
			t.Errorf("%s overridden %v, want %v", p.Name, p.Overridden, set)
		}
	}
	want := map[string]string{"commit.interval.ms": "1000", "sluice.hot.key.share": "2", "sluice.table.retention": "soon"}
	for name, v := range want {
		if shown[name] != v {
			t.Errorf("%s is listed as %q, want %q", name, shown[name], v)
		}
	}
}
