package exec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"

	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/state"
	"github.com/sluice-sql/sluice/types"
)

// ErrNotMaterialized is returned for a table no query keeps in state.
var ErrNotMaterialized = errors.New("not materialized")

// ErrNoKeyPartition is returned by KeyPartition for a table whose rows
// are not partitioned by its key: any store partition may hold a key.
var ErrNoKeyPartition = errors.New("rows not partitioned by the table's key")

// TableReader reads the rows of a table that a query keeps in a state
// store, as of the store's last commit: an aggregation's store (for each
// key or window, the row the query's sink last wrote, after HAVING and
// the projection, computed from the accumulators) or a MaterializeNode's
// (the rows as written, for non-aggregate CREATE TABLE … AS SELECT
// results and source tables). Pull queries are served this way, from
// local Badger state.
type TableReader struct {
	topo *Topology
	// src is the source of the store's sub-topology: the store's
	// partitions are that topic's.
	src *SourceSpec
	// store is the store read: agg's or mat's.
	store string
	agg   *AggregateNode
	// post are the stateless steps between the aggregate and the sink.
	post []Node
	sink *SinkNode
	mat  *MaterializeNode
	// only, when set, limits reads to these store partitions.
	only map[int32]bool
	// keysRead, when set, counts the store entries the reads visit.
	keysRead *int64
}

// CountKeys makes the reader add to n each store entry it reads: a pull
// query reports how many keys its lookup, range or scan visited.
func (r *TableReader) CountKeys(n *int64) *TableReader {
	cp := *r
	cp.keysRead = n
	return &cp
}

func (r *TableReader) counted() {
	if r.keysRead != nil {
		*r.keysRead++
	}
}

// NewTableReader prepares reading the table written (or, for a source
// table, materialized) by topo: the state of its Table node, and, after an
// aggregate, the steps between it and the sink that shape its rows.
func NewTableReader(topo *Topology) (*TableReader, error) {
	if topo.Table == nil {
		return nil, fmt.Errorf("query %s: %w: it keeps no table in state", topo.QueryID, ErrNotMaterialized)
	}
	for _, sub := range topo.Subs {
		for i, n := range sub.Nodes {
			if n != topo.Table {
				continue
			}
			switch n := n.(type) {
			case *MaterializeNode:
				return &TableReader{topo: topo, src: sub.Source, store: n.Store, mat: n}, nil
			case *AggregateNode:
				sink, ok := sub.Nodes[len(sub.Nodes)-1].(*SinkNode)
				if !ok {
					return nil, fmt.Errorf("query %s: %w: its results go to no topic", topo.QueryID, ErrNotMaterialized)
				}
				return &TableReader{topo: topo, src: sub.Source, store: n.Store, agg: n, post: sub.Nodes[i+1 : len(sub.Nodes)-1], sink: sink}, nil
			}
			return nil, fmt.Errorf("query %s: its table is kept by a %T, which no reader reads", topo.QueryID, n)
		}
	}
	return nil, fmt.Errorf("query %s: its table's node is in none of its sub-topologies", topo.QueryID)
}

// Topic is the topic whose partitions the table's state follows: the
// aggregation's input (its repartition topic, or its source when that is
// already keyed by the group key), or the input of the chain a
// MaterializeNode ends (a source table's own topic, a join's main
// input). The instance consuming partition p of it keeps store
// partition p.
func (r *TableReader) Topic() string { return r.src.Topic }

// Store is the name of the state store the table is read from.
func (r *TableReader) Store() string { return r.store }

// Partitions is the number of store partitions (0 if unknown).
func (r *TableReader) Partitions() int32 {
	for _, s := range r.topo.Stores {
		if s.Name == r.store {
			return s.Partitions
		}
	}
	return 0
}

// KeyPartition is the store partition that holds the key key (its
// column values: an aggregation's group key, a materialized table's
// key): the partition its records take in Topic, the key encoded in that
// topic's key format and partitioned by murmur2 as Partitioner does.
// ErrNoKeyPartition says a materialized table's key is not Topic's key
// (MaterializeNode.ByInputKey): any partition may hold it.
func (r *TableReader) KeyPartition(key []any) (int32, error) {
	if r.mat != nil && (!r.mat.ByInputKey || len(key) != len(r.src.KeyCols)) {
		return 0, fmt.Errorf("read table of %s: %w", r.topo.QueryID, ErrNoKeyPartition)
	}
	n := r.Partitions()
	if n <= 0 {
		return 0, fmt.Errorf("read table of %s: store %s has no partition count", r.topo.QueryID, r.store)
	}
	kc, err := format.NewKeyCodec(r.src.KeyFormat, r.src.KeyCols, r.src.KeyProps)
	if err != nil {
		return 0, fmt.Errorf("read table of %s: key format: %w", r.topo.QueryID, err)
	}
	b, err := kc.Encode(key)
	if err != nil {
		return 0, fmt.Errorf("read table of %s: encode key: %w", r.topo.QueryID, err)
	}
	return KeyPartition(r.src.Topic, b, n), nil
}

// Only returns a reader limited to the given store partitions: an
// instance answers for the partitions it owns, and the state of
// partitions it owned once and that moved away is left unread.
func (r *TableReader) Only(partitions []int32) *TableReader {
	cp := *r
	cp.only = map[int32]bool{}
	for _, p := range partitions {
		cp.only[p] = true
	}
	return &cp
}

func (r *TableReader) reads(partition int32) bool { return r.only == nil || r.only[partition] }

// Scan calls fn with each row of the table, in the table's source row
// layout: key columns, value columns, ROWTIME, ROWPARTITION, ROWOFFSET
// (NULL: a state row has no offset), and WINDOWSTART, WINDOWEND for a
// windowed table. Only the store partitions present in db are read.
// fn returning false stops the scan.
func (r *TableReader) Scan(db *state.DB, fn func(row []any) bool) error {
	return r.eachStore(db, func(store *state.Store, partition int32) (bool, error) {
		return r.scanPartition(store, partition, fn)
	})
}

// eachStore calls read with each store partition of the table that db
// holds and this reader reads, in db's order, until read says to stop
// or fails.
func (r *TableReader) eachStore(db *state.DB, read func(store *state.Store, partition int32) (more bool, err error)) error {
	ids, err := db.Stores()
	if err != nil {
		return fmt.Errorf("read table of %s: %w", r.topo.QueryID, err)
	}
	for _, id := range ids {
		if id.Name != r.store || !r.reads(id.Partition) {
			continue
		}
		more, err := read(db.Store(id.Name, id.Partition), id.Partition)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// collect ends the post-aggregate chain, turning the sink's input into a
// table row.
type collect struct {
	r         *TableReader
	partition int32
	fn        func(row []any) bool
	stop      bool
}

func (c *collect) Open(*TaskContext) error        { return nil }
func (c *collect) AdvanceTime(*TaskContext) error { return nil }
func (c *collect) Close() error                   { return nil }

func (c *collect) Process(_ *TaskContext, row *Row) error {
	if row.Tombstone || c.stop {
		return nil // HAVING rejected the group: not in the table
	}
	s := c.r.sink
	out := make([]any, 0, len(s.KeyIdx)+len(s.ValueIdx)+5)
	for _, i := range s.KeyIdx {
		out = append(out, row.Cols[i])
	}
	for _, i := range s.ValueIdx {
		out = append(out, row.Cols[i])
	}
	out = append(out, row.Ts, c.partition, nil)
	if s.Window != NotWindowed {
		out = append(out, row.Cols[s.WindowStartIdx], row.Cols[s.WindowEndIdx])
	}
	c.stop = !c.fn(out)
	return nil
}

// ScanKeys is Scan limited to the given keys (each the values of the
// table's key columns, in order), read directly rather than by a full
// scan where the store layout keeps a key's entries together: keys of a
// non-windowed table, and the windows of one key for SESSION and
// SLIDING. Time windows lay the window start first, so they are scanned
// whole.
func (r *TableReader) ScanKeys(db *state.DB, keys [][]any, fn func(row []any) bool) error {
	if r.agg != nil {
		if w := r.agg.Window; w != nil && w.Kind != Session && w.Kind != Sliding {
			return r.Scan(db, fn)
		}
	}
	encoded := make([][]byte, len(keys))
	for i, k := range keys {
		if r.mat != nil {
			encoded[i] = joinTableKey(nil, k, len(k), nil)
		} else {
			encoded[i] = types.AppendValues(nil, k)
		}
	}
	return r.eachStore(db, func(store *state.Store, partition int32) (bool, error) {
		for _, k := range encoded {
			if more, err := r.scanPrefix(store, partition, k, fn); err != nil || !more {
				return false, err
			}
		}
		return true, nil
	})
}

// ScanRange is Scan limited to the keys in rng, read by ordered key
// ranges: in each store partition, a seek to each run's first key and a
// stop at its end (KeyRange.rangeRuns), the rows in key order. A table
// whose layout or key type keeps no order for the range (a windowed
// aggregation lays the window start first; STRING, BYTES and DECIMAL
// keys are encoded length first) is scanned whole, as ksqlDB scans a
// windowed table for a range; the query's WHERE filters either way.
func (r *TableReader) ScanRange(db *state.DB, rng *KeyRange, fn func(row []any) bool) error {
	var prefix []byte
	counted := rng.NKeys != 1
	if r.agg != nil {
		if r.agg.Window != nil {
			return r.Scan(db, fn)
		}
		prefix, counted = []byte{tableDataTag}, true
	}
	text := rng.textRange()
	runs, ok := rng.rangeRuns(prefix, counted)
	if !ok && !text {
		return r.Scan(db, fn)
	}
	return r.eachStore(db, func(store *state.Store, partition int32) (bool, error) {
		if text {
			return r.readTextRange(store, partition, rng, rng.head(prefix, counted), fn)
		}
		for _, run := range runs {
			if more, err := r.readRun(store, partition, run, fn); err != nil || !more {
				return false, err
			}
		}
		return true, nil
	})
}

// readTextRange reads a STRING or BYTES range of one store partition.
// The state encoding puts a text's length before its bytes, so the keys
// of one length are in order and the lengths follow each other: the
// range is one run per length present (KeyRange.textRun), each found by
// a seek to the first key of the next length, and the rows of all runs
// are then put in value order. It reads the keys in range and, per
// length present, at most the one key its seek finds.
func (r *TableReader) readTextRange(store *state.Store, partition int32, rng *KeyRange, head []byte, fn func(row []any) bool) (bool, error) {
	tagged := rng.textTagged(head)
	storeEnd := prefixEndOf(tagged)
	var rows [][]any
	collect := func(row []any) bool { rows = append(rows, row); return true }
	for length := uint64(0); ; {
		var first []byte
		err := store.RangeCommittedBetween(binary.AppendUvarint(append([]byte(nil), tagged...), length), storeEnd, func(k, _ []byte) bool {
			first = append([]byte(nil), k...)
			return false
		})
		if err != nil {
			return false, fmt.Errorf("read table of %s: %w", r.topo.QueryID, err)
		}
		if first == nil {
			break
		}
		r.counted()
		n, w := binary.Uvarint(first[len(tagged):])
		if w <= 0 {
			return false, fmt.Errorf("read table of %s: key %x: bad text length", r.topo.QueryID, first)
		}
		if run, ok := rng.textRun(tagged, n, storeEnd); ok {
			if _, err := r.readRun(store, partition, run, collect); err != nil {
				return false, err
			}
		}
		length = n + 1
	}
	col := len(rng.Eq)
	slices.SortStableFunc(rows, func(a, b []any) int { return compareText(a[col], b[col]) })
	for _, row := range rows {
		if !fn(row) {
			return false, nil
		}
	}
	return true, nil
}

// readRun reads the rows of one run of keys, in value order.
func (r *TableReader) readRun(store *state.Store, partition int32, run byteRun, fn func(row []any) bool) (bool, error) {
	read := func(fn func(row []any) bool) (bool, error) {
		if r.mat != nil {
			return r.scanMaterializedBetween(store, partition, run.start, run.end, false, fn)
		}
		return r.scanAggregate(store, partition, run.start, run.end, fn)
	}
	if !run.reverse {
		return read(fn)
	}
	var rows [][]any
	if _, err := read(func(row []any) bool { rows = append(rows, row); return true }); err != nil {
		return false, err
	}
	for i := len(rows) - 1; i >= 0; i-- {
		if !fn(rows[i]) {
			return false, nil
		}
	}
	return true, nil
}

// scanMaterialized reads a MaterializeNode's rows of one store
// partition; with a key, only that key's row.
func (r *TableReader) scanMaterialized(store *state.Store, partition int32, key []byte, fn func(row []any) bool) (bool, error) {
	end := prefixEndOf(key)
	if key == nil {
		end = nil
	}
	return r.scanMaterializedBetween(store, partition, key, end, key != nil, fn)
}

// scanMaterializedBetween reads a MaterializeNode's rows whose keys are
// in [start, end); exact keeps only the key start itself.
func (r *TableReader) scanMaterializedBetween(store *state.Store, partition int32, start, end []byte, exact bool, fn func(row []any) bool) (bool, error) {
	width := r.mat.Width()
	more := true
	var failed error
	err := store.RangeCommittedBetween(start, end, func(k, v []byte) bool {
		r.counted()
		if exact && !bytes.Equal(k, start) {
			return true // a longer key that merely starts with this one
		}
		cols, ts, _, err := decodeTableRow(v)
		if err != nil {
			failed = fmt.Errorf("read table of %s: %w", r.topo.QueryID, err)
			return false
		}
		if len(cols) < width {
			failed = fmt.Errorf("read table of %s: stored row has %d columns, want %d", r.topo.QueryID, len(cols), width)
			return false
		}
		// A source table's store restored from its topic keeps the
		// decoded row, pseudo columns and all: the table's are the first.
		out := make([]any, 0, width+3)
		out = append(append(out, cols[:width]...), ts, partition, nil)
		more = fn(out)
		return more
	})
	if err == nil {
		err = failed
	}
	if err != nil {
		return false, fmt.Errorf("read table of %s: %w", r.topo.QueryID, err)
	}
	return more, nil
}

func (r *TableReader) scanPartition(store *state.Store, partition int32, fn func(row []any) bool) (bool, error) {
	return r.scanPrefix(store, partition, nil, fn)
}

// scanPrefix reads the entries of one store partition; with a group key,
// only that key's (its entries follow the layout's tag byte).
func (r *TableReader) scanPrefix(store *state.Store, partition int32, groupKey []byte, fn func(row []any) bool) (bool, error) {
	if r.mat != nil {
		return r.scanMaterialized(store, partition, groupKey, fn)
	}
	prefix, _ := entryLayout(r.agg)
	if groupKey != nil {
		prefix = append(append([]byte(nil), prefix...), groupKey...)
	}
	end := prefixEndOf(prefix)
	if len(prefix) == 0 {
		end = nil
	}
	return r.scanAggregate(store, partition, prefix, end, fn)
}

// scanAggregate reads an aggregation's result rows whose entries are in
// [start, end) of one store partition.
func (r *TableReader) scanAggregate(store *state.Store, partition int32, start, end []byte, fn func(row []any) bool) (bool, error) {
	sink := &collect{r: r, partition: partition, fn: fn}
	var head Operator = sink
	for i := len(r.post) - 1; i >= 0; i-- {
		op, err := r.post[i].New(head)
		if err != nil {
			return false, fmt.Errorf("read table of %s: %w", r.topo.QueryID, err)
		}
		head = op
	}
	tc := &TaskContext{QueryID: r.topo.QueryID, Partition: partition, Metrics: &Metrics{}, Log: slog.New(slog.DiscardHandler), Out: discard{}}
	n := r.agg
	var failed error
	// row runs one result through the post-aggregate chain; false stops
	// the read.
	row := func(group, accs []any, maxTs, start, end int64) bool {
		cols := append([]any(nil), group...)
		if err := guardFunctions(func() {
			for i, call := range n.Aggs {
				cols = append(cols, call.Agg.Result(accs[i]))
			}
		}); err != nil {
			failed = err // a user-defined aggregate's result failed
			return false
		}
		if n.Window != nil {
			cols = append(cols, start, end)
		}
		if err := processGuarded(head, tc, &Row{Cols: cols, Ts: maxTs}); err != nil {
			failed = err
			return false
		}
		return !sink.stop
	}
	var err error
	if n.Sliced {
		err = r.readSlices(store, start, end, row)
	} else {
		_, split := entryLayout(n)
		err = store.RangeCommittedBetween(start, end, func(k, v []byte) bool {
			r.counted()
			gk, start, end, v, ok := split(k, v)
			if !ok {
				return true
			}
			group, _, err := types.DecodeValues(gk)
			if err != nil {
				failed = fmt.Errorf("read table of %s: decode key: %w", r.topo.QueryID, err)
				return false
			}
			accs, maxTs, err := decodeAggState(v, n.Store)
			if err != nil {
				failed = err
				return false
			}
			return row(group, accs, maxTs, start, end)
		})
	}
	if err == nil {
		err = failed
	}
	if err != nil {
		return false, fmt.Errorf("read table of %s: %w", r.topo.QueryID, err)
	}
	return !sink.stop, nil
}

// readSlices reads the open windows of a sliced aggregation
// (aggregate_slices.go) whose starts are in [start, end) (window bounds,
// nil: unbounded), each the merge of its slices, in window and group key
// order: the slices from start up to the last window's end. The windows
// closed by the checkpointed stream time were emitted and are not the
// table's any more, though later slices they held are kept.
func (r *TableReader) readSlices(store *state.Store, start, end []byte, row func(group, accs []any, maxTs, start, end int64) bool) error {
	n := r.agg
	w := n.Window
	cp, err := store.Checkpoint()
	if err != nil {
		return err
	}
	from, last := int64(math.MinInt64), int64(math.MaxInt64)
	if st, ok := cp.SourceOffsets[streamTimeKey]; ok {
		from = w.firstOpenStart(st)
	}
	if lo, _, ok := splitWindowKey(start); ok {
		from = max(from, lo)
	}
	var slicesEnd []byte
	if hi, _, ok := splitWindowKey(end); ok {
		last = hi - 1
		slicesEnd = windowBound(addSat(last, w.Size))
	}
	var runs []sliceRun
	var failed error
	err = store.RangeCommittedBetween(start, slicesEnd, func(k, v []byte) bool {
		r.counted()
		runs, failed = appendSlice(runs, k, v, n.Store)
		return failed == nil
	})
	if err == nil {
		err = failed
	}
	if err != nil {
		return err
	}
	stop := errors.New("stop")
	err = eachSlicedWindow(n, runs, from, last, func(start int64, groups []*mergedSlice) error {
		for _, g := range groups {
			if !row(g.group, g.accs, g.maxTs, start, start+w.Size) {
				return stop
			}
		}
		return nil
	})
	if err == stop {
		return nil
	}
	return err
}

// entryLayout says where an aggregate's result entries are in its store
// and how to split an entry into group key, window bounds and the state
// decodeAggState reads.
func entryLayout(n *AggregateNode) (prefix []byte, split func(k, v []byte) (gk []byte, start, end int64, state []byte, ok bool)) {
	if n.Window == nil {
		return []byte{tableDataTag}, func(k, v []byte) ([]byte, int64, int64, []byte, bool) { return k[1:], 0, 0, v, true }
	}
	size := n.Window.Size
	switch n.Window.Kind {
	case Session:
		return []byte{sessionDataTag}, func(k, v []byte) ([]byte, int64, int64, []byte, bool) {
			gk, start, ok := splitSessionKey(k)
			end, rest, okV := splitSessionState(v)
			return gk, start, end, rest, ok && okV
		}
	case Sliding:
		return []byte{slidingWindowTag}, func(k, v []byte) ([]byte, int64, int64, []byte, bool) {
			if len(k) < 9 {
				return nil, 0, 0, nil, false
			}
			start := readTime(k[len(k)-8:])
			return k[1 : len(k)-8], start, start + size, v, true
		}
	}
	return nil, func(k, v []byte) ([]byte, int64, int64, []byte, bool) {
		if isWindowMember(k) {
			return nil, 0, 0, nil, false // a COUNT_DISTINCT value, not a window
		}
		start, gk, ok := splitWindowKey(k)
		return gk, start, start + size, v, ok
	}
}

// discard is the output of a table read: the post-aggregate steps write
// nothing, but an Output must exist.
type discard struct{}

func (discard) Produce(*Record) {}

// Chain runs rows through stateless nodes outside any task: a pull query
// pushes a table's rows through its own filter and projection this way.
type Chain struct {
	head Operator
	tc   *TaskContext
}

// NewChain builds the operators of nodes, which must keep no state.
func NewChain(queryID string, nodes []Node) (*Chain, error) {
	var head Operator
	for i := len(nodes) - 1; i >= 0; i-- {
		if nodes[i].Stateful() {
			return nil, fmt.Errorf("query %s: %s keeps state: not allowed here", queryID, nodes[i].Describe())
		}
		op, err := nodes[i].New(head)
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", queryID, err)
		}
		head = op
	}
	if head == nil {
		return nil, fmt.Errorf("query %s: no steps", queryID)
	}
	tc := &TaskContext{QueryID: queryID, Metrics: &Metrics{}, Log: slog.New(slog.DiscardHandler), Out: discard{}}
	return &Chain{head: head, tc: tc}, nil
}

// Process runs one row (in the chain's input layout) with event time ts.
func (c *Chain) Process(cols []any, ts int64) error {
	return processGuarded(c.head, c.tc, &Row{Cols: cols, Ts: ts})
}
