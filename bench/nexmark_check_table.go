package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The check of a query whose output is an updating table (nxQuery.upsert:
// q4, q15–q18). Each side writes a changelog of the table, keyed by the
// table's key: Sluice one record per change (its aggregate cache may fold
// several changes of a key into one), Flink's upsert-kafka sink one per
// change as well, a deletion as a tombstone. Neither the count of records
// nor the intermediate values are the query's result, so the check reads
// the output as a table: the latest record of each record key (a key's
// records are in one partition, in order), tombstones removing the key.
// Those latest rows must equal the expected rows as a multiset. The record
// key identifies the row within one side's output only; its columns
// (Sluice keeps the GROUP BY columns in the key, not the value) are read
// into the row where the value lacks them.

// nxTable follows an updating table's output record by record: the latest
// row of each record key, and how many of them are expected rows, so that
// the run can end as soon as the output holds the expected table.
type nxTable struct {
	e      *nxExpected
	latest map[string]string // record key → its latest row, canonical
	have   map[string]int    // canonical row → the keys whose latest it is
	good   int64             // Σ over rows of min(have, expected)
	err    error             // the first record that could not be read
}

func (e *nxExpected) newTable() *nxTable {
	return &nxTable{e: e, latest: map[string]string{}, have: map[string]int{}}
}

// settle returns a fresh follower of the output whose add reports when
// the output holds the expected table (contender.settle).
func (e *nxExpected) settle() func(*kgo.Record) bool { return e.newTable().add }

// add takes the output's next record and says whether the latest rows now
// equal the expected ones (or a record could not be read: the run ends
// and verify reports it).
func (t *nxTable) add(r *kgo.Record) bool {
	if t.err != nil {
		return true
	}
	k := string(r.Key)
	if old, ok := t.latest[k]; ok {
		if t.have[old] <= t.e.rows[old] {
			t.good--
		}
		t.have[old]--
		delete(t.latest, k)
	}
	if r.Value != nil {
		c, err := t.e.tableRow(r)
		if err != nil {
			t.err = err
			return true
		}
		t.latest[k] = c
		t.have[c]++
		if t.have[c] <= t.e.rows[c] {
			t.good++
		}
	}
	return t.good == t.e.n && int64(len(t.latest)) == t.e.n
}

// verifyLatest is verify for an updating table: the latest row of each
// record key must be the expected rows.
func (e *nxExpected) verifyLatest(records []*kgo.Record) error {
	t := e.newTable()
	for _, r := range records {
		t.add(r)
	}
	if t.err != nil {
		return t.err
	}
	if t.good == e.n && int64(len(t.latest)) == e.n {
		return nil
	}
	var extra, missing []string
	for c, n := range t.have {
		if n > e.rows[c] && len(extra) < 3 {
			extra = append(extra, c)
		}
	}
	for c, n := range e.rows {
		if t.have[c] < n && len(missing) < 3 {
			missing = append(missing, c)
		}
	}
	return fmt.Errorf("%d keys in the end, want %d; latest rows not expected: %q; expected rows missing: %q", len(t.latest), e.n, extra, missing)
}

// tableRow is an updating table's output record as a canonical row: its
// value's columns, and the key's where the value lacks them (a JSON key
// object's fields, a JSON key that is one value as keyColumns[0], a KAFKA
// BIGINT key as keyColumn).
func (e *nxExpected) tableRow(r *kgo.Record) (string, error) {
	row, err := nxDecode(r.Value)
	if err != nil {
		return "", fmt.Errorf("record %q: %w", r.Value, err)
	}
	d := json.NewDecoder(bytes.NewReader(r.Key))
	d.UseNumber()
	var key any
	switch err := d.Decode(&key); {
	case err == nil:
		if obj, ok := key.(map[string]any); ok {
			for c, v := range obj {
				if _, ok := row[strings.ToLower(c)]; !ok {
					row[strings.ToLower(c)] = v
				}
			}
		} else if len(e.keyColumns) == 1 {
			if _, ok := row[e.keyColumns[0]]; !ok {
				row[e.keyColumns[0]] = key
			}
		}
	case e.key != "" && len(r.Key) >= 8:
		if _, ok := row[e.key]; !ok {
			row[e.key] = int64(binary.BigEndian.Uint64(r.Key))
		}
	}
	for k := range row {
		if !slices.Contains(e.columns, k) {
			return "", fmt.Errorf("record %s (key %s) has a column %s the query does not select", r.Value, r.Key, k)
		}
	}
	for _, k := range e.columns {
		if _, ok := row[k]; !ok {
			row[k] = nil
		}
	}
	c, err := nxCanonical(row, e.times)
	if err != nil {
		return "", fmt.Errorf("record %s: %w", r.Value, err)
	}
	return c, nil
}
