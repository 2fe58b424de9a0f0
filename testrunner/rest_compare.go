package testrunner

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strings"
)

// verifyRESTResponses compares the server's responses with a case's
// expected ones, as ksqlDB's REST runner does: an expected object names
// only the fields it checks (a key "name|startsWith" checks a prefix),
// and a query's rows are compared as a multiset unless verifyOrder,
// while everything else, headers and final messages included, is
// compared in place.
func verifyRESTResponses(expected []map[string]any, actual []restResponse, verifyOrder bool) []string {
	if len(actual) < len(expected) {
		return []string{fmt.Sprintf("not enough responses: got %d, want %d", len(actual), len(expected))}
	}
	var diffs []string
	for i, exp := range expected {
		if len(exp) != 1 {
			return append(diffs, fmt.Sprintf("invalid case: responses[%d] has %d keys, want 1", i, len(exp)))
		}
		var kind string
		var payload any
		for k, v := range exp {
			kind, payload = k, v
		}
		act := actual[i]
		if act.kind != kind {
			diffs = append(diffs, fmt.Sprintf("responses[%d]: got a %s response, want %s", i, act.kind, kind))
			continue
		}
		path := fmt.Sprintf("responses[%d]->%s", i, kind)
		switch kind {
		case "admin":
			m, ok := payload.(map[string]any)
			if !ok {
				return append(diffs, "invalid case: "+path+" is not an object")
			}
			ms := newMultisets()
			diffs = append(diffs, matchFields(act.body, m, path, verifyOrder, ms)...)
			diffs = append(diffs, ms.diffs()...)
		case "query":
			diffs = append(diffs, verifyQueryResponse(path, payload, act.rows, verifyOrder)...)
		case "queryProto":
			diffs = append(diffs, verifyProtoResponse(path, payload, act.rows, verifyOrder)...)
		default:
			diffs = append(diffs, "invalid case: unknown response type "+kind)
		}
	}
	return diffs
}

func verifyQueryResponse(path string, payload any, rows []map[string]any, verifyOrder bool) []string {
	exp, ok := payload.([]any)
	if !ok {
		return []string{"invalid case: " + path + " is not an array"}
	}
	if len(rows) != len(exp) {
		return []string{fmt.Sprintf("%s: %d elements, want %d:\n      want %s\n      got  %s", path, len(rows), len(exp), compactJSON(exp), compactJSON(rows))}
	}
	ms := newMultisets()
	var diffs []string
	for i := range rows {
		e, ok := exp[i].(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("invalid case: %s[%d] is not an object", path, i)}
		}
		diffs = append(diffs, matchFields(rows[i], e, fmt.Sprintf("%s[%d]", path, i), verifyOrder, ms)...)
	}
	return append(diffs, ms.diffs()...)
}

// multisets gathers the rows' columns compared without order: how often
// each expected and each actual value occurs.
type multisets struct {
	want, got map[string]int
	order     []string
}

func newMultisets() *multisets { return &multisets{want: map[string]int{}, got: map[string]int{}} }

func (m *multisets) add(expected, actual any) {
	e, a := canonicalJSON(expected), canonicalJSON(actual)
	for _, k := range []string{e, a} {
		if m.want[k] == 0 && m.got[k] == 0 {
			m.order = append(m.order, k)
		}
	}
	m.want[e]++
	m.got[a]++
}

func (m *multisets) diffs() []string {
	var missing, extra []string
	for _, k := range m.order {
		for n := m.want[k] - m.got[k]; n > 0; n-- {
			missing = append(missing, k)
		}
		for n := m.got[k] - m.want[k]; n > 0; n-- {
			extra = append(extra, k)
		}
	}
	var out []string
	if len(missing) > 0 {
		out = append(out, "rows missing: "+strings.Join(missing, " "))
	}
	if len(extra) > 0 {
		out = append(out, "rows not expected: "+strings.Join(extra, " "))
	}
	return out
}

// matchFields checks the fields expected names in actual.
func matchFields(actual, expected map[string]any, path string, verifyOrder bool, ms *multisets) []string {
	var diffs []string
	keys := make([]string, 0, len(expected))
	for k := range expected {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		want := expected[k]
		name, op, _ := strings.Cut(k, "|")
		got, ok := actual[name]
		at := path + "->" + name
		if !ok {
			diffs = append(diffs, fmt.Sprintf("%s: missing; the response has %s", at, compactJSON(actual)))
			continue
		}
		if wm, ok := want.(map[string]any); ok {
			gm, ok := got.(map[string]any)
			if !ok {
				diffs = append(diffs, fmt.Sprintf("%s: got %s, want an object", at, compactJSON(got)))
				continue
			}
			diffs = append(diffs, matchFields(gm, wm, at, verifyOrder, ms)...)
			continue
		}
		switch {
		case strings.EqualFold(op, "startsWith"):
			ws, _ := want.(string)
			gs, ok := got.(string)
			if !ok || !strings.HasPrefix(gs, ws) {
				diffs = append(diffs, fmt.Sprintf("%s: got %s, want a string starting %q", at, compactJSON(got), ws))
			}
		case !verifyOrder && strings.Contains(at, "query") && strings.Contains(at, "row") && strings.EqualFold(name, "columns"):
			ms.add(want, got)
		default:
			if canonicalJSON(want) != canonicalJSON(got) {
				diffs = append(diffs, fmt.Sprintf("%s: got %s, want %s", at, compactJSON(got), compactJSON(want)))
			}
		}
	}
	return diffs
}

// canonicalJSON renders a JSON value with sorted object keys and numbers
// by value (1, 1.0 and 1e0 alike), so equal values render equal.
func canonicalJSON(v any) string {
	var b strings.Builder
	writeCanonical(&b, v)
	return b.String()
}

func writeCanonical(b *strings.Builder, v any) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteByte(':')
			writeCanonical(b, x[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonical(b, e)
		}
		b.WriteByte(']')
	case json.Number:
		if r, ok := new(big.Rat).SetString(x.String()); ok {
			b.WriteString(r.RatString())
			return
		}
		b.WriteString(x.String())
	default:
		vb, _ := json.Marshal(x)
		b.Write(vb)
	}
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
