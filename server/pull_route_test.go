package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/cluster"
	"github.com/sluice-sql/sluice/engine"
)

func TestPullRouteCandidates(t *testing.T) {
	inst := func(url string, self bool) cluster.Instance {
		return cluster.Instance{Status: cluster.Status{URL: url}, Self: self, Alive: true}
	}
	owner, here := answerer{url: "http://b"}, answerer{}
	sbC, sbHere := answerer{url: "http://c", standby: true}, answerer{standby: true}
	for _, tc := range []struct {
		name         string
		owner        cluster.Instance
		hasOwner     bool
		suspect      bool
		standbys     []cluster.Instance
		standbyReads bool
		want         []answerer
	}{
		{"owner alive, no standby reads", inst("http://b", false), true, false, []cluster.Instance{inst("http://c", false)}, false, []answerer{owner}},
		{"owned here", inst("http://a", true), true, false, nil, false, []answerer{here}},
		{"owner not alive, no standby reads", cluster.Instance{}, false, false, []cluster.Instance{inst("http://c", false)}, false, nil},
		{"owner alive, then its standbys", inst("http://b", false), true, false, []cluster.Instance{inst("http://c", false), inst("http://a", true)}, true, []answerer{owner, sbC, sbHere}},
		{"owner not alive: straight to the standby", cluster.Instance{}, false, false, []cluster.Instance{inst("http://c", false)}, true, []answerer{sbC}},
		{"a suspect owner goes last", inst("http://b", false), true, true, []cluster.Instance{inst("http://c", false)}, true, []answerer{sbC, owner}},
		{"suspicion does not matter without standby reads", inst("http://b", false), true, true, []cluster.Instance{inst("http://c", false)}, false, []answerer{owner}},
		{"owner not alive, no standby", cluster.Instance{}, false, false, nil, true, nil},
		{"an owner is never its own standby", inst("http://b", false), true, false, []cluster.Instance{inst("http://b", false)}, true, []answerer{owner}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := candidates(tc.owner, tc.hasOwner, tc.suspect, tc.standbys, tc.standbyReads)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(answerer{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestPullRoute(t *testing.T) {
	owner, here := answerer{url: "http://b"}, answerer{}
	sbC, sbHere := answerer{url: "http://c", standby: true}, answerer{standby: true}
	cands := map[int32][]answerer{
		0: {here},
		1: {owner, sbC},
		2: {owner, sbHere},
		3: {owner},
	}
	for _, tc := range []struct {
		name            string
		pending         []int32
		failed          map[answerer]bool
		want            map[answerer][]int32
		wantUnavailable []int32
	}{
		{"owners first", []int32{0, 1, 2, 3}, nil, map[answerer][]int32{here: {0}, owner: {1, 2, 3}}, nil},
		{"the owner's forward failed: its standbys, one partition without", []int32{1, 2, 3}, map[answerer]bool{owner: true}, map[answerer][]int32{sbC: {1}, sbHere: {2}}, []int32{3}},
		{"a standby refused too (lag over the limit)", []int32{1}, map[answerer]bool{owner: true, sbC: true}, map[answerer][]int32{}, []int32{1}},
		{"no candidate at all", []int32{7}, nil, map[answerer][]int32{}, []int32{7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, unavailable := route(tc.pending, cands, tc.failed)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(answerer{})); diff != "" {
				t.Errorf("groups (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantUnavailable, unavailable); diff != "" {
				t.Errorf("unavailable (-want +got):\n%s", diff)
			}
		})
	}
	if !hasFallback(owner, []int32{3, 1}, cands, nil) {
		t.Error("partition 1 has a standby after the owner: a fallback")
	}
	if hasFallback(owner, []int32{3}, cands, nil) || hasFallback(owner, []int32{1}, cands, map[answerer]bool{sbC: true}) {
		t.Error("no fallback when the owner is the last candidate not failed")
	}
}

// TestPullGathering runs the gathering loop with answerers that refuse a
// given number of times (the partition is restoring there, or the
// instance is cut off) and then answer one row per partition.
func TestPullGathering(t *testing.T) {
	owner, here := answerer{url: "http://b"}, answerer{}
	sbC := answerer{url: "http://c", standby: true}
	refused := fmt.Errorf("%w: partition 4 is RESTORING", engine.ErrPartitionUnavailable)
	for _, tc := range []struct {
		name         string
		standbyReads bool
		cands        map[int32][]answerer
		// refusals is how many times each answerer refuses before it
		// answers; -1 for always.
		refusals      map[answerer]int
		want          []string
		wantForwarded []string
		wantStandbyOf []int32
		wantErr       error
	}{
		{
			name:          "owners answer",
			cands:         map[int32][]answerer{0: {here}, 1: {owner}, 2: {owner}},
			want:          []string{"p0", "p1", "p2"},
			wantForwarded: []string{"http://b"},
		},
		{
			name:          "an owner that refuses: its standby",
			standbyReads:  true,
			cands:         map[int32][]answerer{0: {here}, 1: {owner, sbC}},
			refusals:      map[answerer]int{owner: -1},
			want:          []string{"p0", "p1"},
			wantForwarded: []string{"http://c"},
			wantStandbyOf: []int32{1},
		},
		{
			// Seen in the cut-off fault test: partitions 1, 4 and 5 had just
			// moved here, 4 still restoring; 1 and 5 went to their standby
			// while 4 waited, and their rows were left out.
			name:          "partitions with a candidate are asked while one without waits",
			standbyReads:  true,
			cands:         map[int32][]answerer{1: {here, sbC}, 4: {here}, 5: {here, sbC}},
			refusals:      map[answerer]int{here: 1},
			want:          []string{"p1", "p4", "p5"},
			wantForwarded: []string{"http://c"},
			wantStandbyOf: []int32{1, 5},
		},
		{
			name:         "nobody answers within the window: the last refusal",
			standbyReads: true,
			cands:        map[int32][]answerer{1: {here, sbC}, 4: {here}},
			refusals:     map[answerer]int{here: -1},
			wantErr:      refused,
		},
		{
			name:     "without standby reads a refusal fails the query",
			cands:    map[int32][]answerer{1: {owner, sbC}},
			refusals: map[answerer]int{owner: -1},
			wantErr:  refused,
		},
		{
			name:    "no candidate",
			cands:   map[int32][]answerer{3: nil},
			wantErr: engine.ErrPartitionUnavailable,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			refusals := maps.Clone(tc.refusals)
			g := &gathering{
				standbyReads: tc.standbyReads,
				retryWindow:  200 * time.Millisecond,
				retryPause:   20 * time.Millisecond,
				candidates:   func(part int32) []answerer { return tc.cands[part] },
				ask: func(_ context.Context, a answerer, parts []int32, _ bool) ([]json.RawMessage, error) {
					mu.Lock()
					defer mu.Unlock()
					if n := refusals[a]; n != 0 {
						refusals[a] = max(n-1, -1)
						return nil, refused
					}
					var rows []json.RawMessage
					for _, p := range parts {
						rows = append(rows, json.RawMessage(fmt.Sprintf("%q", fmt.Sprintf("p%d", p))))
					}
					return rows, nil
				},
				failedOver:  func(answerer, []int32, error) {},
				unavailable: func(part int32) error { return fmt.Errorf("%w: partition %d", engine.ErrPartitionUnavailable, part) },
			}
			needed := slices.Sorted(maps.Keys(tc.cands))
			got, err := g.run(context.Background(), needed)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var rows []string
			for _, r := range got.rows {
				var s string
				if err := json.Unmarshal(r, &s); err != nil {
					t.Fatal(err)
				}
				rows = append(rows, s)
			}
			slices.Sort(rows)
			if diff := cmp.Diff(tc.want, rows); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantForwarded, got.forwardedTo); diff != "" {
				t.Errorf("forwarded to (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantStandbyOf, got.standbyOf); diff != "" {
				t.Errorf("standby of (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPullFailoverable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("%w: refused", engine.ErrPartitionUnavailable), true},
		{fmt.Errorf("x: %w", noAnswer{errors.New("dial tcp: connection refused")}), true},
		{fmt.Errorf("%w: HTTP 500", errServer), true},
		{errors.New("line 1:8: no such column"), false},
	} {
		if got := failoverable(tc.err); got != tc.want {
			t.Errorf("failoverable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestSuspects(t *testing.T) {
	var s suspects
	t0 := time.Now()
	in := cluster.Instance{Status: cluster.Status{URL: "http://b"}, SeenMs: t0.Add(-time.Second).UnixMilli()}
	if s.suspect(in) {
		t.Fatal("suspect before any failure")
	}
	s.mark("http://b", t0)
	if !s.suspect(in) {
		t.Fatal("not suspect after a failure it has not been heard from since")
	}
	in.SeenMs = t0.Add(time.Second).UnixMilli()
	if s.suspect(in) {
		t.Fatal("still suspect after a heartbeat")
	}
	in.SeenMs = t0.Add(-time.Second).UnixMilli()
	s.clear("http://b")
	if s.suspect(in) {
		t.Fatal("still suspect after it answered")
	}
}
