package testrunner

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var updateWindows = flag.Bool("update-windows", false, "rewrite testdata/windows/*.json from the engine, after checking it against the reference")

// The window reference cases: every window kind × emit mode over the same
// kind of input, where one record in five is late by a random amount,
// some within grace and some beyond it. The expected results are computed
// here by brute force — from the list of accepted records, not from
// accumulators — following the stated semantics:
//
//   - stream time is the largest event time seen so far (this record's
//     included);
//   - TUMBLING/HOPPING: a record joins each window [s, s+size) containing
//     it for which s + size + grace > stream time; a window is final once
//     s + size + grace <= stream time;
//   - SESSION: a record merges with the open sessions (end + gap + grace >
//     stream time) whose span comes within gap of it; it is accepted when
//     the merged end + gap + grace >= stream time; a session is final once
//     end + gap + grace <= stream time;
//   - SLIDING: a record at t is accepted when t + grace >= stream time;
//     the windows are [t−size, t] for each accepted t and [t+1, t+1+size]
//     for each accepted t followed by an accepted record within size; a
//     window [s, e] is final once e + grace < stream time.
//
// EMIT CHANGES is compared as the table its output builds (last value per
// key and window; tombstones delete); EMIT FINAL as the exact set of
// records, each window once.
var windowKinds = []struct {
	name, clause, winType string
}{
	{"tumbling", "TUMBLING (SIZE 10 SECONDS, GRACE PERIOD 3 SECONDS)", "time"},
	{"hopping", "HOPPING (SIZE 10 SECONDS, ADVANCE BY 5 SECONDS, GRACE PERIOD 3 SECONDS)", "time"},
	{"session", "SESSION (4 SECONDS, GRACE PERIOD 3 SECONDS)", "session"},
	{"sliding", "SLIDING (SIZE 5 SECONDS, GRACE PERIOD 3 SECONDS)", "time"},
}

type refEvent struct {
	key string
	ts  int64
	v   int64
}

// refEvents makes n records over three keys: event time moves forward by
// up to 2.5 s a record, and every fifth record on average is late by up
// to 20 s. Times are multiples of 500 ms so that records land exactly on
// window bounds and grace limits often.
func refEvents(seed uint64, n int) (evs []refEvent, late int) {
	r := rand.New(rand.NewPCG(seed, 1))
	t := int64(1_000_000)
	for range n {
		t += 500 * r.Int64N(6)
		ts := t
		if r.IntN(5) == 0 {
			ts = t - 500*(1+r.Int64N(40))
			late++
		}
		evs = append(evs, refEvent{key: fmt.Sprintf("k%d", 1+r.IntN(3)), ts: ts, v: r.Int64N(100)})
	}
	return evs, late
}

// refWindow is one window's result: the accepted records it holds.
type refWindow struct {
	key        string
	start, end int64
	recs       []refEvent
}

func (w refWindow) id() string { return fmt.Sprintf("%s@%d-%d", w.key, w.start, w.end) }

// reference computes the final windows (all windows with EMIT CHANGES;
// the closed ones with EMIT FINAL) of the given kind.
func reference(kind string, evs []refEvent, final bool) map[string]refWindow {
	const sec = 1000
	out := map[string]refWindow{}
	st := int64(-1 << 62)
	add := func(key string, s, e int64, ev refEvent) {
		w := refWindow{key: key, start: s, end: e}
		if old, ok := out[w.id()]; ok {
			w = old
		}
		w.recs = append(w.recs, ev)
		out[w.id()] = w
	}
	switch kind {
	case "tumbling", "hopping":
		size, adv, grace := int64(10*sec), int64(10*sec), int64(3*sec)
		if kind == "hopping" {
			adv = 5 * sec
		}
		for _, ev := range evs {
			st = max(st, ev.ts)
			for s := int64(0); s <= ev.ts; s += adv {
				if ev.ts < s+size && s+size+grace > st {
					add(ev.key, s, s+size, ev)
				}
			}
		}
		if final {
			for id, w := range out {
				if w.end+grace > st {
					delete(out, id)
				}
			}
		}
	case "session":
		gap, grace := int64(4*sec), int64(3*sec)
		sessions := map[string][]refWindow{}
		for _, ev := range evs {
			st = max(st, ev.ts)
			merged := refWindow{key: ev.key, start: ev.ts, end: ev.ts, recs: []refEvent{ev}}
			var keep []refWindow
			for _, s := range sessions[ev.key] {
				open := s.end+gap+grace > st
				if open && s.start <= ev.ts+gap && s.end >= ev.ts-gap {
					merged.start, merged.end = min(merged.start, s.start), max(merged.end, s.end)
					merged.recs = append(merged.recs, s.recs...)
					continue
				}
				keep = append(keep, s)
			}
			if merged.end+gap+grace < st {
				continue // late: the sessions it touched stay as they were
			}
			sessions[ev.key] = append(keep, merged)
		}
		for _, list := range sessions {
			for _, s := range list {
				if !final || s.end+gap+grace <= st {
					out[s.id()] = s
				}
			}
		}
	case "sliding":
		size, grace := int64(5*sec), int64(3*sec)
		var acc []refEvent
		for _, ev := range evs {
			st = max(st, ev.ts)
			if ev.ts+grace >= st {
				acc = append(acc, ev)
			}
		}
		starts := map[string]map[int64]bool{}
		for _, a := range acc {
			if starts[a.key] == nil {
				starts[a.key] = map[int64]bool{}
			}
			starts[a.key][a.ts-size] = true
			for _, b := range acc {
				if b.key == a.key && b.ts > a.ts && b.ts <= a.ts+size {
					starts[a.key][a.ts+1] = true
				}
			}
		}
		for key, ss := range starts {
			for s := range ss {
				w := refWindow{key: key, start: s, end: s + size}
				for _, a := range acc {
					if a.key == key && a.ts >= s && a.ts <= s+size {
						w.recs = append(w.recs, a)
					}
				}
				if !final || w.end+grace < st {
					out[w.id()] = w
				}
			}
		}
	}
	return out
}

// refValue is a window's expected output value and timestamp.
func refValue(w refWindow) (map[string]int64, int64) {
	var sum, mx, ts int64 = 0, -1, -1
	for _, r := range w.recs {
		sum += r.v
		mx, ts = max(mx, r.v), max(ts, r.ts)
	}
	return map[string]int64{"N": int64(len(w.recs)), "S": sum, "M": mx}, ts
}

// windowCase builds the sluice test case for one kind and emit mode.
func windowCase(kind, clause string, final bool, evs []refEvent) *Case {
	emit := "CHANGES"
	if final {
		emit = "FINAL"
	}
	c := &Case{
		Name: kind + " emit " + emit,
		Statements: []string{
			"CREATE STREAM ev (k VARCHAR KEY, v BIGINT) WITH (kafka_topic='ev', value_format='JSON');",
			fmt.Sprintf("CREATE TABLE agg AS SELECT k, COUNT(*) AS n, SUM(v) AS s, MAX(v) AS m FROM ev WINDOW %s GROUP BY k EMIT %s;", clause, emit),
		},
		Properties: map[string]string{"sluice.compat": "sluice"},
	}
	for _, ev := range evs {
		ts := ev.ts
		c.Inputs = append(c.Inputs, Record{Topic: "ev", Key: ev.key, Value: map[string]any{"V": json.Number(fmt.Sprint(ev.v))}, Timestamp: &ts})
	}
	return c
}

// tableOf reduces output records to the windows they leave: the last
// value of each key and window, tombstones deleting. It fails on a
// record without a window.
func tableOf(t *testing.T, recs []Record) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, r := range recs {
		if r.Window == nil {
			t.Fatalf("output record without a window: %+v", r)
		}
		id := fmt.Sprintf("%v@%d-%d", r.Key, r.Window.Start, r.Window.End)
		if r.Value == nil {
			delete(out, id)
			continue
		}
		out[id] = recordText(r)
	}
	return out
}

func recordText(r Record) string {
	v, _ := json.Marshal(r.Value)
	ts := int64(-1)
	if r.Timestamp != nil {
		ts = *r.Timestamp
	}
	return fmt.Sprintf("%s ts=%d type=%s", v, ts, r.Window.Type)
}

func referenceTable(ref map[string]refWindow, winType string) map[string]string {
	out := map[string]string{}
	for id, w := range ref {
		v, ts := refValue(w)
		ts2 := ts
		out[id] = recordText(Record{Value: v, Timestamp: &ts2, Window: &Window{Type: winType}})
	}
	return out
}

func TestWindowsAgainstReference(t *testing.T) {
	evs, late := refEvents(42, 400)
	if late < 60 || late > 100 {
		t.Fatalf("%d of 400 records late, want about 20%%", late)
	}
	for _, k := range windowKinds {
		for _, final := range []bool{false, true} {
			c := windowCase(k.name, k.clause, final, evs)
			t.Run(c.Name, func(t *testing.T) {
				ref := reference(k.name, evs, final)
				if len(ref) < 20 {
					t.Fatalf("reference has only %d windows: the input does not exercise the window", len(ref))
				}
				want := referenceTable(ref, k.winType)
				path := filepath.Join("testdata", "windows", fmt.Sprintf("%s-%s.json", k.name, map[bool]string{false: "changes", true: "final"}[final]))
				for _, mode := range []Restart{NoRestart, RestartLocal, RestartWiped} {
					got, err := runCase(c, mode)
					if err != nil {
						t.Fatalf("restart mode %d: %v", mode, err)
					}
					if final {
						seen := map[string]bool{}
						for _, r := range got {
							id := tableKey(r)
							if r.Value == nil || seen[id] {
								t.Fatalf("restart mode %d: EMIT FINAL gave a window twice or a tombstone: %+v", mode, r)
							}
							seen[id] = true
						}
					}
					if diff := cmp.Diff(want, tableOf(t, got)); diff != "" {
						t.Fatalf("restart mode %d: results differ from the reference (-want +got):\n%s", mode, diff)
					}
					if mode == NoRestart && *updateWindows {
						writeWindowCase(t, path, c, got)
					}
				}
				// The case file in testdata must hold this input and the
				// engine's output, so `sluice test` runs the same check.
				f, err := LoadQTT(path)
				if err != nil {
					t.Fatalf("%v (run go test ./testrunner -run TestWindowsAgainstReference -update-windows)", err)
				}
				if len(f.Cases) != 1 || !slices.EqualFunc(f.Cases[0].Inputs, c.Inputs, func(a, b Record) bool {
					return a.Key == b.Key && *a.Timestamp == *b.Timestamp && fmt.Sprint(a.Value) == fmt.Sprint(b.Value)
				}) {
					t.Fatalf("%s does not hold this case's input: regenerate with -update-windows", path)
				}
				if diff := cmp.Diff(want, tableOf(t, f.Cases[0].Outputs)); diff != "" {
					t.Fatalf("%s: expected outputs differ from the reference (-want +got):\n%s", path, diff)
				}
				if r := RunCase(filepath.Base(path), &f.Cases[0]); r.Status != Passed {
					t.Fatalf("%s: %s\n%s", path, r.Status, report(r))
				}
			})
		}
	}
}

func tableKey(r Record) string {
	return fmt.Sprintf("%v@%d-%d", r.Key, r.Window.Start, r.Window.End)
}

// writeWindowCase stores a case in the QTT format `sluice test` reads.
func writeWindowCase(t *testing.T, path string, c *Case, outputs []Record) {
	t.Helper()
	type rec struct {
		Topic     string         `json:"topic"`
		Key       any            `json:"key"`
		Value     any            `json:"value"`
		Timestamp int64          `json:"timestamp"`
		Window    map[string]any `json:"window,omitempty"`
	}
	conv := func(rs []Record) []rec {
		out := make([]rec, len(rs))
		for i, r := range rs {
			out[i] = rec{Topic: r.Topic, Key: r.Key, Value: r.Value, Timestamp: *r.Timestamp}
			if r.Window != nil {
				out[i].Window = map[string]any{"start": r.Window.Start, "end": r.Window.End, "type": r.Window.Type}
			}
		}
		return out
	}
	// One record a line keeps the files small and their diffs readable.
	var b strings.Builder
	line := func(v any) string {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	b.WriteString("{\n  \"comments\": [\n")
	comments := []string{
		"Generated by TestWindowsAgainstReference (testrunner/windows_reference_test.go) from seeded random",
		"input where one record in five is late; the test checks these outputs against a brute-force",
		"reference before writing them. Regenerate: go test ./testrunner -run TestWindowsAgainstReference -update-windows",
	}
	for i, cm := range comments {
		b.WriteString("    " + line(cm) + map[bool]string{true: ",\n", false: "\n"}[i < len(comments)-1])
	}
	fmt.Fprintf(&b, "  ],\n  \"tests\": [{\n    \"name\": %s,\n    \"statements\": %s,\n    \"properties\": %s,\n", line(c.Name), line(c.Statements), line(c.Properties))
	for _, part := range []struct {
		name string
		recs []rec
	}{{"inputs", conv(c.Inputs)}, {"outputs", conv(outputs)}} {
		fmt.Fprintf(&b, "    %q: [\n", part.name)
		for i, r := range part.recs {
			b.WriteString("      " + line(r) + map[bool]string{true: ",\n", false: "\n"}[i < len(part.recs)-1])
		}
		b.WriteString(map[string]string{"inputs": "    ],\n", "outputs": "    ]\n"}[part.name])
	}
	b.WriteString("  }]\n}\n")
	data := []byte(b.String())
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
