package server

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/sluice-sql/sluice/exec"
)

// consoleGraph is one query's topology as nodes and edges, built from the
// same exec.Topology EXPLAIN prints.
type consoleGraph struct {
	ID       string            `json:"id"`
	Nodes    []consoleNode     `json:"nodes"`
	Edges    [][2]int          `json:"edges"`
	Lateness []consoleLateness `json:"lateness"`
	// HotKeys are the busiest input keys of each running task on this
	// instance, busiest first.
	HotKeys []consoleHotKeys `json:"hotKeys"`
	// Warnings are EXPLAIN's scaling warnings: instances beyond the
	// input partitions, keys too hot to spread.
	Warnings []string `json:"warnings"`
}

type consoleHotKeys struct {
	Topic     string          `json:"topic"`
	Partition int32           `json:"partition"`
	Records   int64           `json:"records"`
	Keys      []consoleHotKey `json:"keys"`
}

type consoleHotKey struct {
	Key   string `json:"key"`
	Count int64  `json:"count"`
}

// hotKeysShown is how many keys a task shows at most.
const hotKeysShown = 5

type consoleNode struct {
	// Kind is source, operator, store, repartition or sink.
	Kind  string `json:"kind"`
	Label string `json:"label"`
	Sub   int    `json:"sub"`
	// Step is an operator's place in its sub-topology's chain (-1 for
	// other nodes); Rows the rows it has taken in on this instance, from
	// which the page shows its records/s.
	Step int   `json:"step"`
	Rows int64 `json:"rows"`
	// Rate is an operator's rows/s over about the last rateSpan.
	Rate float64 `json:"rate"`
}

// consoleLateness is a source's lateness as quantiles (ms), with the
// grace in force and the grace that would keep 99% and 99.9% of records.
type consoleLateness struct {
	Topic     string       `json:"topic"`
	Count     int64        `json:"count"`
	Max       int64        `json:"max"`
	GraceMs   int64        `json:"graceMs"`
	Above     int64        `json:"aboveGrace"`
	Grace99   int64        `json:"grace99"`
	Grace999  int64        `json:"grace999"`
	Quantiles [][2]float64 `json:"quantiles"`
}

var plotQuantiles = []float64{0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999, 1}

func topologyGraph(t *exec.Topology) consoleGraph {
	g := consoleGraph{ID: t.QueryID, Nodes: []consoleNode{}, Edges: [][2]int{}, Lateness: []consoleLateness{}}
	add := func(n consoleNode) int { g.Nodes = append(g.Nodes, n); return len(g.Nodes) - 1 }
	repart := map[string]int{}
	for _, it := range t.Internal {
		repart[it.Name] = add(consoleNode{Kind: "repartition", Label: "repartition " + it.Name, Sub: -1, Step: -1})
	}
	// Each operator that writes a topic gets an edge to it: a repartition
	// (or foreign-key) topic another sub-topology reads, or the sink. The
	// node says which topic it writes (writtenTopic), so the edge follows
	// the topology, not a name.
	storeOf := map[string][]int{}
	for _, s := range t.Subs {
		var src int
		if r, ok := repart[s.Source.Topic]; ok {
			src = r
		} else {
			src = add(consoleNode{Kind: "source", Label: s.Source.Describe(), Sub: s.ID, Step: -1})
		}
		prev := src
		first := len(g.Nodes)
		for step, n := range s.Nodes {
			id := add(consoleNode{Kind: "operator", Label: n.Describe(), Sub: s.ID, Step: step})
			g.Edges = append(g.Edges, [2]int{prev, id})
			prev = id
			for _, name := range n.StoreNames() {
				storeOf[name] = append(storeOf[name], id)
			}
		}
		for _, si := range s.Sides {
			var side int
			if r, ok := repart[si.Source.Topic]; ok {
				side = r
			} else {
				side = add(consoleNode{Kind: "source", Label: si.Source.Describe(), Sub: s.ID, Step: -1})
			}
			if si.Node < len(s.Nodes) {
				g.Edges = append(g.Edges, [2]int{side, first + si.Node})
			}
		}
		for step, n := range s.Nodes {
			topic := writtenTopic(n)
			if topic == "" {
				continue
			}
			if r, ok := repart[topic]; ok {
				g.Edges = append(g.Edges, [2]int{first + step, r})
			} else if topic == t.SinkTopic {
				sink := add(consoleNode{Kind: "sink", Label: "topic " + t.SinkTopic, Sub: s.ID, Step: -1})
				g.Edges = append(g.Edges, [2]int{first + step, sink})
			}
		}
	}
	for _, st := range t.Stores {
		label := "store " + st.Name + " → changelog " + st.Changelog
		id := add(consoleNode{Kind: "store", Label: label, Sub: -1, Step: -1})
		for _, op := range storeOf[st.Name] {
			g.Edges = append(g.Edges, [2]int{op, id})
		}
	}
	return g
}

// windowGraces gives, per sub-topology id, the grace of the windowed
// aggregate its main input flows into (in it, or in a sub-topology after
// one or more repartition topics), or -1 when its rows meet no window. A
// second input (a join's table) goes into a store, not a window; the
// caller gives it -1.
func windowGraces(t *exec.Topology) map[int]int64 {
	graces := map[int]int64{}
	readBy := map[string]int{}
	for _, s := range t.Subs {
		graces[s.ID] = -1
		readBy[s.Source.Topic] = s.ID
		for _, n := range s.Nodes {
			if agg, ok := n.(*exec.AggregateNode); ok && agg.Window != nil {
				graces[s.ID] = agg.Window.Grace
			}
		}
	}
	// A sub-topology feeding one with a grace takes it on; each pass
	// carries graces one repartition further upstream.
	for range t.Subs {
		for _, s := range t.Subs {
			for _, n := range s.Nodes {
				if next, ok := readBy[writtenTopic(n)]; ok && next != s.ID && graces[s.ID] < 0 {
					graces[s.ID] = graces[next]
				}
			}
		}
	}
	return graces
}

// writtenTopic is the topic an operator produces to for the next
// sub-topology or the sink; "" for one that only forwards rows.
func writtenTopic(n exec.Node) string {
	switch n := n.(type) {
	case *exec.SinkNode:
		return n.Topic
	case *exec.FKJoinLeftNode:
		return n.Subscription.Topic
	case *exec.FKJoinRightNode:
		return n.Response.Topic
	}
	return ""
}

func (s *Server) handleConsoleQuery(w http.ResponseWriter, r *http.Request) {
	id := strings.ToUpper(r.PathValue("id"))
	for _, q := range s.eng.Queries() {
		if q.ID != id {
			continue
		}
		g := topologyGraph(q.Plan.Topology)
		now := time.Now()
		if q.Metrics != nil {
			for i, n := range g.Nodes {
				if n.Kind == "operator" {
					g.Nodes[i].Rows = q.Metrics.OperatorRows(n.Sub, n.Step)
					g.Nodes[i].Rate = s.rates.rate(fmt.Sprintf("%s/op/%d/%d", q.ID, n.Sub, n.Step), now, g.Nodes[i].Rows)
				}
			}
		}
		graces := windowGraces(q.Plan.Topology)
		for _, sub := range q.Plan.Topology.Subs {
			for _, in := range sub.Inputs() {
				// A repartition topic's records are measured where they
				// entered the query, at its source, never again.
				if in.Dedupe {
					continue
				}
				grace := graces[sub.ID]
				if in != sub.Source {
					grace = -1
				}
				var all exec.Histogram
				if q.Metrics != nil {
					if lt := q.Metrics.Lateness(in.Topic); lt != nil {
						all, _ = lt.Snapshot(now)
					}
				}
				l := consoleLateness{Topic: in.Topic, Count: all.Count(), Max: all.Max(), GraceMs: grace,
					Grace99: all.Quantile(0.99), Grace999: all.Quantile(0.999), Quantiles: [][2]float64{}}
				if grace >= 0 {
					l.Above = all.Above(grace)
				}
				if all.Count() > 0 {
					for _, p := range plotQuantiles {
						l.Quantiles = append(l.Quantiles, [2]float64{p, float64(all.Quantile(p))})
					}
				}
				g.Lateness = append(g.Lateness, l)
			}
		}
		g.HotKeys = []consoleHotKeys{}
		for _, ti := range q.Tasks() {
			if ti.HotKeys == nil {
				continue
			}
			top, records := ti.HotKeys.Top()
			hk := consoleHotKeys{Topic: ti.Topic, Partition: ti.Partition, Records: records, Keys: []consoleHotKey{}}
			for i, kc := range top {
				if i == hotKeysShown {
					break
				}
				hk.Keys = append(hk.Keys, consoleHotKey{Key: string(kc.Key), Count: kc.Count})
			}
			g.HotKeys = append(g.HotKeys, hk)
		}
		warnings, err := s.eng.Warnings(q.ID)
		if err != nil {
			genericError(w, http.StatusInternalServerError, codeServerError, err.Error())
			return
		}
		g.Warnings = nonNil(warnings)
		writeJSON(w, http.StatusOK, g)
		return
	}
	genericError(w, http.StatusNotFound, codeNotFound, "query "+id+" not found")
}
