package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The Nexmark suite's output check: every contender's output, read back
// from its topic once complete, must be the query's expected rows
// (nexmark_queries.go), as a multiset: streams give no order across
// partitions. Rows are compared in a canonical text: column names in lower
// case (Sluice writes unquoted names in upper case, Flink as declared),
// numbers by value (a DECIMAL's 9080.000 equals 9080), timestamps in epoch
// milliseconds (Flink writes TIMESTAMP(3) as text), a missing column as
// NULL.

// nxCanonical is a row's canonical text: its columns sorted by name.
func nxCanonical(row map[string]any, times []string) (string, error) {
	keys := make([]string, 0, len(row))
	for k := range row {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		v, err := nxValue(row[k], slices.Contains(times, k))
		if err != nil {
			return "", fmt.Errorf("column %s: %w", k, err)
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(v)
		b.WriteByte(' ')
	}
	return b.String(), nil
}

// nxValue is one value's canonical text.
func nxValue(v any, isTime bool) (string, error) {
	switch v := v.(type) {
	case nil:
		return "null", nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case *big.Rat:
		return v.RatString(), nil
	case json.Number:
		r, ok := new(big.Rat).SetString(string(v))
		if !ok {
			return "", fmt.Errorf("number %q", v)
		}
		return r.RatString(), nil
	case string:
		if isTime {
			ms, err := nxParseTime(v)
			if err != nil {
				return "", err
			}
			return strconv.FormatInt(ms, 10), nil
		}
		return strconv.Quote(v), nil
	case bool:
		return strconv.FormatBool(v), nil
	}
	return "", fmt.Errorf("unexpected %T %v", v, v)
}

// nxParseTime reads a timestamp's text as Flink's JSON format writes it
// ("2026-12-06 00:40:00.123", UTC as the job's time zone), or ISO-8601.
func nxParseTime(s string) (int64, error) {
	for _, layout := range []string{"2006-01-02 15:04:05.999999999", "2006-01-02 15:04:05.999999999Z", "2006-01-02T15:04:05.999999999", time.RFC3339Nano} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t.UnixMilli(), nil
		}
	}
	return 0, fmt.Errorf("timestamp %q", s)
}

// nxDecode is an output record's value as a row: columns in lower case.
func nxDecode(v []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	row := make(map[string]any, len(m))
	for k, x := range m {
		row[strings.ToLower(k)] = x
	}
	return row, nil
}

// nxExpected is a query's expected output as a multiset of canonical rows,
// and the columns every row has.
type nxExpected struct {
	rows    map[string]int
	n       int64
	columns []string
	times   []string
	key     string // the query's keyColumn
	// upsert, keyColumns: the query's (an updating table's output).
	upsert     bool
	keyColumns []string
}

func newNXExpected(q *nxQuery, nx *nxEvents, side string, env nxEnv) (*nxExpected, error) {
	e := &nxExpected{rows: map[string]int{}, times: q.times, key: q.keyColumn, upsert: q.upsert, keyColumns: q.keyColumns}
	var rows []map[string]any
	if q.expectFor != nil {
		rows = q.expectFor(nx, side, env)
	} else {
		rows = q.expect(nx)
	}
	for _, r := range rows {
		if e.columns == nil {
			for k := range r {
				e.columns = append(e.columns, k)
			}
		}
		c, err := nxCanonical(r, q.times)
		if err != nil {
			return nil, err
		}
		e.rows[c]++
		e.n++
	}
	return e, nil
}

// verify compares an output with the expected rows. Columns the output
// has beyond the expected ones are an error; those it lacks are NULL.
func (e *nxExpected) verify(records []*kgo.Record) error {
	if e.upsert {
		return e.verifyLatest(records)
	}
	if int64(len(records)) != e.n {
		return fmt.Errorf("%d records, want %d", len(records), e.n)
	}
	left := make(map[string]int, len(e.rows))
	for k, n := range e.rows {
		left[k] = n
	}
	var extra []string
	for _, r := range records {
		v := r.Value
		row, err := nxDecode(v)
		if err != nil {
			return fmt.Errorf("record %q: %w", v, err)
		}
		// The key column, where this side's rows have it (Flink writes no
		// key: q5's window start is Sluice's and Kafka Streams' only).
		if _, ok := row[e.key]; e.key != "" && !ok && slices.Contains(e.columns, e.key) {
			if len(r.Key) < 8 {
				return fmt.Errorf("record %s: no %s in the value, and the key %x holds no BIGINT", v, e.key, r.Key)
			}
			row[e.key] = int64(binary.BigEndian.Uint64(r.Key))
		}
		for k := range row {
			if !slices.Contains(e.columns, k) {
				return fmt.Errorf("record %s has a column %s the query does not select", v, k)
			}
		}
		for _, k := range e.columns {
			if _, ok := row[k]; !ok {
				row[k] = nil
			}
		}
		c, err := nxCanonical(row, e.times)
		if err != nil {
			return fmt.Errorf("record %s: %w", v, err)
		}
		if left[c] == 0 {
			if len(extra) < 3 {
				extra = append(extra, c)
			}
			continue
		}
		left[c]--
	}
	if len(extra) == 0 {
		return nil
	}
	var missing []string
	for k, n := range left {
		if n > 0 && len(missing) < 3 {
			missing = append(missing, k)
		}
	}
	return fmt.Errorf("rows not expected: %q; expected rows missing: %q", extra, missing)
}
