package exec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/state"
	"github.com/sluice-sql/sluice/types"
)

// JoinType is the kind of a join.
type JoinType int

const (
	InnerJoin JoinType = iota
	LeftJoin
	RightJoin
	FullJoin
)

func (j JoinType) String() string { return [...]string{"INNER", "LEFT", "RIGHT", "FULL OUTER"}[j] }

// outer reports whether side (0 left, 1 right) is kept without a match.
func (j JoinType) outer(side int) bool {
	return j == FullJoin || (side == 0 && j == LeftJoin) || (side == 1 && j == RightJoin)
}

// JoinSide describes one input of a join: how wide its rows are, where
// the join key sits in them, and whether it is a table (its latest row
// per key is kept) or a stream.
type JoinSide struct {
	Name  string
	Width int
	// KeyCol is the position of the join key in the side's rows: the key
	// column of a side read as it is, or the key of a repartitioned side.
	KeyCol int
	Table  bool
	// Window holds the positions of the side's window bounds when its
	// source is windowed (nil otherwise): rows join only within the same
	// window, and the joined row carries it.
	Window []int
	// WindowStartOnly joins rows on the key and window start alone: time
	// windows of different sizes (which ksqlDB joins when their keys are
	// in a Schema Registry format, whose windowed keys carry only the
	// start).
	WindowStartOnly bool
	// Store holds the side's rows: a table side's latest row per key, a
	// stream side's rows within the join window ("" for the stream side of
	// a stream-table join, which keeps nothing).
	Store string
	// Columns names the side's row slots; a stream side's store records
	// them (joinLayoutKey), so that rows written in another layout are
	// read by name. LegacyColumns is the layout of a store that records
	// none: the side's slots in a plan before the join-column-pruning
	// rule, whose stores were written by an older Sluice (nil: Columns).
	// Nil Columns: the store's layout is not checked.
	Columns, LegacyColumns []string
	// SameRow, when above 0, makes a table side's row whose first
	// SameRow columns equal the kept row's no change in a table-table
	// join: nothing is kept or emitted (a change-data-capture table,
	// whose connector re-sends events after a restart).
	SameRow int
	// Filter, when set, is the part of the query's WHERE that reads this
	// stream side's columns only, moved below the join by the planner's
	// predicate-pushdown rule: a row it does not hold for is neither kept
	// nor joined. Only a side no join pads with NULLs gets one, so every
	// result such a row would have joined into fails the WHERE anyway.
	// FilterText is how EXPLAIN shows it. Table sides take none.
	Filter     expr.Eval
	FilterText string
}

// JoinNode joins two co-partitioned inputs on their keys. Rows out are
// laid out as
//
//	[left row…, right row…, join key, ROWTIME, ROWPARTITION, ROWOFFSET]
//
// with a missing side's columns NULL. Its first input is the row chain
// the node sits in (Process); the second arrives through ProcessSide,
// from a SideInput of the sub-topology.
//
// Semantics, as in ksqlDB:
//   - stream-table: each stream row looks up the table's current row for
//     its key; only stream rows produce output; a null key produces none.
//   - table-table: a change on either side recomputes the key's result
//     and emits it, or a tombstone when a result existed and no longer
//     does.
//   - stream-stream: a left row at t matches right rows in
//     [t-Before, t+After]. With Grace set (WITHIN … GRACE PERIOD), an
//     outer side's row without a match is emitted when its window closes:
//     t + lookback + grace < stream time, lookback being After for left
//     rows and Before for right rows. Without it (Legacy) such a row is
//     emitted null-padded at once, and again joined should a match come.
//     A row whose window has already ended (t + lookback < stream time)
//     and finds no match is emitted null-padded at once. Each side keeps
//     rows no older than its own newest event time less
//     Before+After+Grace (as Kafka Streams' window stores do), and is
//     searched no further back; an older row is late: counted (and sent
//     to LateTopic), still joined with what the other side keeps, but
//     not kept.
type JoinNode struct {
	Type          JoinType
	Left, Right   JoinSide
	Before, After int64
	Grace         int64
	// Legacy is a stream-stream join without GRACE PERIOD: unmatched
	// outer rows are emitted at once (ksqlDB's behaviour before grace).
	Legacy    bool
	LateTopic string
	Text      string
}

// Width is the width of joined rows: with windowed inputs, the window
// bounds follow ROWOFFSET.
func (n *JoinNode) Width() int {
	if n.Left.Window != nil {
		return n.Left.Width + n.Right.Width + 6
	}
	return n.Left.Width + n.Right.Width + 4
}

// joinKey encodes a side row's join key, with its window when windowed.
func (s *JoinSide) joinKey(buf []byte, cols []any) []byte {
	buf = types.AppendValue(buf, cols[s.KeyCol])
	for i, w := range s.Window {
		if i > 0 && s.WindowStartOnly {
			break
		}
		buf = types.AppendValue(buf, cols[w])
	}
	return buf
}

func (n *JoinNode) streams() bool { return !n.Left.Table && !n.Right.Table }

func (n *JoinNode) Describe() string {
	kind := "stream-stream"
	switch {
	case n.Left.Table && n.Right.Table:
		kind = "table-table"
	case n.Right.Table:
		kind = "stream-table"
	}
	s := fmt.Sprintf("join %s %s %s ⋈ %s", kind, n.Type, n.Left.Name, n.Right.Name)
	if n.streams() {
		s += fmt.Sprintf(" within (%d ms before, %d ms after), grace %d ms", n.Before, n.After, n.Grace)
		if n.Legacy {
			s += ", unmatched rows emitted at once"
		}
	}
	for _, st := range []string{n.Left.Store, n.Right.Store} {
		if st != "" {
			s += " [store " + st + "]"
		}
	}
	if n.Text != "" {
		s += " ON " + n.Text
	}
	for i, side := range []JoinSide{n.Left, n.Right} {
		if side.FilterText != "" {
			s += fmt.Sprintf(" [%s rows where %s]", [2]string{"left", "right"}[i], side.FilterText)
		}
	}
	return s
}

func (n *JoinNode) Stateful() bool { return true }

func (n *JoinNode) StoreNames() []string {
	var out []string
	for _, st := range []string{n.Left.Store, n.Right.Store} {
		if st != "" {
			out = append(out, st)
		}
	}
	return out
}

func (n *JoinNode) New(next Operator) (Operator, error) {
	return &joinOp{forward: forward{next}, node: n, reuse: borrowsRows(next)}, nil
}

// SideOperator is an operator fed by more than one input: a sub-topology's
// SideInput delivers its rows to ProcessSide.
type SideOperator interface {
	Operator
	ProcessSide(tc *TaskContext, side int, row *Row) error
}

type joinOp struct {
	forward
	node   *JoinNode
	stores [2]*state.Store
	buf    []byte
	// observed is, per stream side, the newest event time its store has
	// seen. As in Kafka Streams' window stores, a side keeps rows no
	// older than observed - (Before+After+Grace) and is searched no
	// further back.
	observed [2]int64
	// observedOut writes observed to each stream side's store once per
	// commit, not once per record that moves it.
	observedOut [2]*observedWriteBack
	// nextPending and nextExpiry are, per stream side, lower bounds of
	// the oldest event time among the side's pending and expiry keys
	// (math.MaxInt64: it keeps none), so that closing windows opens an
	// iterator only when a key is due, not once per record. They start
	// unknown (math.MinInt64) when the operator opens, so its first scan
	// learns them from the store, the truth; an aborted transaction
	// closes the task and its successor opens a new operator.
	nextPending, nextExpiry [2]int64
	// tables holds, per table side, rows of its store decoded, by
	// encoded key (see tableRow).
	tables [2]map[string]tableEntry
	// kept indexes, per stream side, the rows its store keeps (nil: the
	// side is a table, or keeps more rows than keptIndexRows, and its
	// matches are scanned in the store).
	kept [2]*keptIndex
	// reuse says next keeps nothing of a row (rowBorrower): every joined
	// row is laid out in out's columns, handed on as out.
	reuse bool
	out   Row
	// matches and kbuf are reused from record to record; addMatch is
	// appendMatch as a func value, made once (a closure over a local
	// slice, or a method value made per call, costs two allocations a
	// record).
	matches  []joinMatch
	kbuf     []byte
	addMatch func(r *keptRow) error
}

// tableCacheEntries bounds the decoded table rows a join keeps per side
// and task: when full, the cache starts again empty.
const tableCacheEntries = 1 << 15

// tableEntry is a table side's row for a key as its store holds it: cols
// nil when the store has none.
type tableEntry struct {
	cols []any
	ts   int64
}

// joinMatch is a kept row of the other side that a stream row matches.
type joinMatch struct {
	off  [8]byte
	cols []any
	ts   int64
}

// Stream-stream store layout (one store per side and partition):
//
//	0x00 ‖ key ‖ ts ‖ offset  → row values
//	0x01 ‖ ts ‖ key ‖ offset  → empty: a kept row by time, for expiry,
//	                            for the rows kept while the side had no
//	                            index (see keptIndex)
//	0x02 ‖ ts ‖ key ‖ offset  → empty: outer rows still without a match,
//	                            emitted when their window closes
//	0x03                      → the newest event time the side has seen
//	0x04                      → the names of the row values' columns
//	                            (none: JoinSide.LegacyColumns)
//
// Table stores map the encoded key to ts ‖ row values.
const (
	joinDataTag    = 0x00
	joinExpiryTag  = 0x01
	joinPendingTag = 0x02
	joinObserved   = 0x03
	joinLayoutKey  = 0x04
)

func (j *joinOp) Open(tc *TaskContext) error {
	for i, side := range []JoinSide{j.node.Left, j.node.Right} {
		if side.Store == "" {
			continue
		}
		s, err := tc.Store(side.Store)
		if err != nil {
			return err
		}
		j.stores[i] = s
		j.observed[i] = math.MinInt64
		j.nextPending[i], j.nextExpiry[i] = math.MinInt64, math.MinInt64
		if !side.Table {
			v, ok, err := s.Get([]byte{joinObserved})
			if err != nil {
				return err
			}
			if ok && len(v) == 8 {
				j.observed[i] = readTime(v)
			}
			j.observedOut[i] = &observedWriteBack{store: s}
			s.SetWriteBack(j.observedOut[i])
			if err := migrateJoinRows(s, side); err != nil {
				return err
			}
			if j.kept[i], err = buildKeptIndex(s); err != nil {
				return err
			}
			if j.kept[i] == nil {
				if err := completeExpiryKeys(s, &j.kbuf); err != nil {
					return err
				}
			}
			// Rows expired without tombstones that a restore brought
			// back go before the first record, unless an outer side
			// still has a row among them waiting to be emitted alone:
			// closeWindows emits it first, then expires.
			waiting, err := j.pendingAmongExpired(i, tc.StreamTime)
			if err != nil {
				return err
			}
			if !waiting {
				if err := j.expireRows(i, tc.StreamTime); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// migrateJoinRows rewrites, by name, the rows of a stream side's store
// that another layout wrote (a plan before the join-column-pruning rule
// kept every column) into the side's, and records the side's layout
// when it is not the one a store without a record has. The writes go out
// with the task's first commit; an abort drops them, and the next open
// repeats the rewrite.
func migrateJoinRows(s *state.Store, side JoinSide) error {
	if side.Columns == nil {
		return nil
	}
	stored := side.LegacyColumns
	v, recorded, err := s.Get([]byte{joinLayoutKey})
	if err != nil {
		return fmt.Errorf("join store %s: read its row layout: %w", side.Store, err)
	}
	if recorded {
		stored = nil
		names, rest, err := types.DecodeValues(v)
		if err == nil && len(rest) != 0 {
			err = fmt.Errorf("%d bytes after it", len(rest))
		}
		if err != nil {
			return fmt.Errorf("join store %s: malformed row layout %x: %w", side.Store, v, err)
		}
		for _, n := range names {
			name, ok := n.(string)
			if !ok {
				return fmt.Errorf("join store %s: malformed row layout %x", side.Store, v)
			}
			stored = append(stored, name)
		}
	}
	if stored == nil {
		stored = side.Columns
	}
	if recorded && slices.Equal(stored, side.Columns) {
		return nil
	}
	if !recorded && side.LegacyColumns == nil {
		return nil // the store and the side both have the unpruned layout
	}
	if !slices.Equal(stored, side.Columns) {
		at := make([]int, len(side.Columns))
		for i, c := range side.Columns {
			if at[i] = slices.Index(stored, c); at[i] < 0 {
				return fmt.Errorf("join store %s: its rows lack column %s", side.Store, c)
			}
		}
		if err := rewriteJoinRows(s, side.Store, len(stored), at); err != nil {
			return err
		}
	}
	names := make([]any, len(side.Columns))
	for i, c := range side.Columns {
		names[i] = c
	}
	s.Put([]byte{joinLayoutKey}, types.AppendValues(nil, names))
	return nil
}

// rewriteJoinRows puts every data row of s, of width columns, back as
// the columns at the positions at.
func rewriteJoinRows(s *state.Store, store string, width int, at []int) error {
	type oldRow struct{ key, value []byte }
	var batch []oldRow
	from := []byte{joinDataTag}
	row := make([]any, len(at))
	for {
		batch = batch[:0]
		err := s.RangeBetween(from, []byte{joinDataTag + 1}, func(k, v []byte) bool {
			batch = append(batch, oldRow{bytes.Clone(k), bytes.Clone(v)})
			return len(batch) < expiryRefill
		})
		if err != nil {
			return fmt.Errorf("join store %s: read rows of the old layout: %w", store, err)
		}
		if len(batch) == 0 {
			return nil
		}
		for _, old := range batch {
			vals, rest, err := types.DecodeValues(old.value)
			if err != nil || len(rest) != 0 || len(vals) != width {
				return fmt.Errorf("join store %s: row %x is not of its recorded layout (%d columns): %v", store, old.key, width, err)
			}
			for i, p := range at {
				row[i] = vals[p]
			}
			s.Put(old.key, types.AppendValues(nil, row))
		}
		last := batch[len(batch)-1].key
		from = append(last[:len(last):len(last)], 0)
	}
}

// Close lets go of the stores: the newest event times written since the
// last commit are written with the next one's, or lost with an abort.
func (j *joinOp) Close() error {
	for i, w := range j.observedOut {
		if w != nil {
			j.stores[i].DropWriteBack(w)
		}
	}
	return j.forward.Close()
}

// observedWriteBack holds a stream side's newest event time until its
// store hands out its writes (the changelog, a commit) or ranges over
// them, and writes it then: one write per commit instead of one per
// record in event-time order. It is the store's WriteBack (the join owns
// the store's keys).
type observedWriteBack struct {
	store *state.Store
	ts    int64
	dirty bool
	buf   [8]byte
}

var _ state.WriteBack = (*observedWriteBack)(nil)

func (w *observedWriteBack) set(ts int64) { w.ts, w.dirty = ts, true }

func (w *observedWriteBack) WriteBack() {
	if w.dirty {
		w.dirty = false
		w.store.Put([]byte{joinObserved}, appendTime(w.buf[:0], w.ts))
	}
}

// Discard forgets the time not yet written: the store drops its writes
// since the commit (an abort), and the task's next operator reads the
// time the store keeps.
func (w *observedWriteBack) Discard() { w.dirty = false }

func (j *joinOp) Process(tc *TaskContext, row *Row) error { return j.ProcessSide(tc, 0, row) }

func (j *joinOp) ProcessSide(tc *TaskContext, side int, row *Row) error {
	n := j.node
	this := n.Left
	if side == 1 {
		this = n.Right
	}
	if this.Table {
		return j.tableChange(tc, side, row)
	}
	if row.Tombstone {
		return nil // a stream's null value carries nothing to join
	}
	if this.Filter != nil {
		if pass, _ := this.Filter(row.Cols).(bool); !pass {
			return nil
		}
	}
	key := row.Cols[this.KeyCol]
	if key == nil {
		return nil // a null key joins nothing, as in ksqlDB
	}
	j.buf = this.joinKey(j.buf[:0], row.Cols)
	if n.streams() {
		return j.streamStream(tc, side, row, j.buf)
	}
	// Stream side of a stream-table join.
	other, ts, ok, err := j.tableRow(1-side, j.buf)
	if err != nil {
		return err
	}
	_ = ts
	if !ok && !n.Type.outer(side) {
		return nil
	}
	return j.emit(tc, side, row.Cols, other, key, row.Ts, false)
}

// tableRow reads a table side's current row for an encoded key. Rows
// are read again and again (every stream row of a key looks its table row
// up), so the operator keeps them decoded: the cache is never the truth,
// but a copy of what the store holds, for tableChange, the only writer of
// the store while the operator is open, drops a key's entry whenever it
// writes the key. The operator starts with none when it opens (after a
// restore, or when an aborted transaction reopened the task). Rows are
// shared with the rows emitted, whose values nothing modifies.
func (j *joinOp) tableRow(side int, key []byte) (cols []any, ts int64, ok bool, err error) {
	c := j.tables[side]
	if c == nil {
		c = make(map[string]tableEntry)
		j.tables[side] = c
	}
	if e, hit := c[string(key)]; hit {
		return e.cols, e.ts, e.cols != nil, nil
	}
	v, ok, err := j.stores[side].Get(key)
	if err != nil {
		return nil, 0, false, err
	}
	if ok {
		if cols, ts, _, err = decodeTableRow(v); err != nil {
			return nil, 0, false, err
		}
	}
	if len(c) >= tableCacheEntries {
		clear(c)
	}
	c[string(key)] = tableEntry{cols: cols, ts: ts}
	return cols, ts, ok, nil
}

func decodeTableRow(v []byte) (cols []any, ts int64, ok bool, err error) {
	if len(v) < 8 {
		return nil, 0, false, fmt.Errorf("join table row: %d bytes, want at least 8", len(v))
	}
	cols, _, err = types.DecodeValues(v[8:])
	if err != nil {
		return nil, 0, false, fmt.Errorf("join table row: %w", err)
	}
	return cols, int64(binary.BigEndian.Uint64(v)), true, nil
}

// EncodeTableRow is how a join keeps a table row: its event time, then
// its values. Restoring from the table's own topic encodes the same way.
func EncodeTableRow(buf []byte, ts int64, cols []any) []byte {
	buf = binary.BigEndian.AppendUint64(buf, uint64(ts))
	return types.AppendValues(buf, cols)
}

// tableChange applies a change of a table side and, in a table-table
// join, emits the key's new result.
func (j *joinOp) tableChange(tc *TaskContext, side int, row *Row) error {
	n := j.node
	this := n.Left
	if side == 1 {
		this = n.Right
	}
	key := row.Cols[this.KeyCol]
	if key == nil {
		return nil
	}
	k := this.joinKey(j.buf[:0], row.Cols)
	j.buf = k
	var old []any
	var oldTs int64
	both := n.Left.Table && n.Right.Table
	if both {
		var err error
		if old, oldTs, _, err = j.tableRow(side, k); err != nil {
			return err
		}
	}
	if both && this.SameRow > 0 && (row.Tombstone && old == nil || !row.Tombstone && sameRow(old, row.Cols, this.SameRow)) {
		return nil
	}
	if row.Tombstone {
		j.stores[side].Delete(k)
	} else {
		j.kbuf = EncodeTableRow(j.kbuf[:0], row.Ts, row.Cols)
		j.stores[side].Put(k, j.kbuf)
	}
	delete(j.tables[side], string(k))
	if !both {
		return nil
	}
	other, otherTs, _, err := j.tableRow(1-side, k)
	if err != nil {
		return err
	}
	var cur []any
	if !row.Tombstone {
		cur = row.Cols
	}
	present := func(this []any) bool {
		switch {
		case this != nil && other != nil:
			return true
		case this != nil:
			return n.Type.outer(side)
		case other != nil:
			return n.Type.outer(1 - side)
		}
		return false
	}
	ts := max(row.Ts, otherTs)
	if other == nil {
		ts = row.Ts
	}
	if present(cur) {
		return j.emit(tc, side, cur, other, key, ts, false)
	}
	if present(old) {
		_ = oldTs
		return j.emit(tc, side, old, other, key, ts, true)
	}
	return nil
}

// emit forwards the joined row of this side's cols and the other side's.
func (j *joinOp) emit(tc *TaskContext, side int, this, other []any, key any, ts int64, tombstone bool) error {
	n := j.node
	left, right := this, other
	if side == 1 {
		left, right = other, this
	}
	var cols []any
	if j.reuse && cap(j.out.Cols) >= n.Width() {
		cols = j.out.Cols[:n.Width()]
		clear(cols) // a missing side's columns are NULL
	} else {
		cols = make([]any, n.Width())
	}
	copy(cols, left)
	copy(cols[n.Left.Width:], right)
	base := n.Left.Width + n.Right.Width
	cols[base] = key
	cols[base+1] = ts
	cols[base+2] = tc.Partition
	if tc.input != nil {
		cols[base+3] = tc.input.Offset
	}
	if w := n.Left.Window; w != nil {
		src, pos := left, w
		if src == nil {
			src, pos = right, n.Right.Window
		}
		cols[base+4], cols[base+5] = src[pos[0]], src[pos[1]]
	}
	if j.reuse {
		j.out = Row{Cols: cols, Ts: ts, Tombstone: tombstone}
		return j.forward.emit(tc, &j.out)
	}
	return j.forward.emit(tc, &Row{Cols: cols, Ts: ts, Tombstone: tombstone})
}

func (j *joinOp) lookback(side int) int64 {
	if side == 0 {
		return j.node.After
	}
	return j.node.Before
}

func (j *joinOp) retention() int64 { return j.node.Before + j.node.After + j.node.Grace }

// streamStream joins a stream row with the other side's kept rows.
func (j *joinOp) streamStream(tc *TaskContext, side int, row *Row, key []byte) error {
	n := j.node
	if err := j.closeWindows(tc); err != nil {
		return err
	}
	ts := row.Ts
	// The other side's rows that match: for a left row [ts-Before,
	// ts+After], for a right row [ts-After, ts+Before].
	from, to := ts-n.Before, ts+n.After
	if side == 1 {
		from, to = ts-n.After, ts+n.Before
	}
	offset := int64(0)
	if tc.input != nil {
		offset = tc.input.Offset
	}
	if ts > j.observed[side] {
		j.observed[side] = ts
		j.observedOut[side].set(ts)
	}
	kept := ts > j.observed[side]-j.retention()
	if !kept {
		lateRecord(tc, n.LateTopic, row, from, to, j.observed[side]-ts, n.Grace)
	}
	otherStore := j.stores[1-side]
	if o := j.observed[1-side]; o != math.MinInt64 {
		from = max(from, o-j.retention()+1)
	}
	matches, err := j.match(1-side, key, from, to)
	defer func() {
		// Forget the rows so the reused slice holds none past the record.
		clear(matches)
		j.matches = matches[:0]
	}()
	if err != nil {
		return err
	}
	for i := range matches {
		m := &matches[i]
		// The other row found its match: it no longer waits to be
		// emitted alone.
		if n.Type.outer(1-side) && !n.Legacy {
			j.kbuf = pendingKey(j.kbuf[:0], m.ts, key, m.off[:])
			otherStore.Delete(j.kbuf)
		}
		if err := j.emit(tc, side, row.Cols, m.cols, row.Cols[j.sideSpec(side).KeyCol], max(ts, m.ts), false); err != nil {
			return err
		}
	}
	var off [8]byte
	binary.BigEndian.PutUint64(off[:], uint64(offset))
	if len(matches) == 0 && n.Type.outer(side) {
		if n.Legacy || to < tc.StreamTime {
			if err := j.emit(tc, side, row.Cols, nil, row.Cols[j.sideSpec(side).KeyCol], ts, false); err != nil {
				return err
			}
		} else if kept {
			j.kbuf = pendingKey(j.kbuf[:0], ts, key, off[:])
			j.stores[side].Put(j.kbuf, nil)
			j.nextPending[side] = min(j.nextPending[side], ts)
		}
	}
	if kept {
		own := j.stores[side]
		kb := appendTime(append(append(j.kbuf[:0], joinDataTag), key...), ts)
		kb = append(kb, off[:]...)
		mid := len(kb)
		kb = types.AppendValues(kb, row.Cols)
		own.Put(kb[:mid], kb[mid:])
		j.kbuf = kb
		x := j.kept[side]
		if x == nil {
			// No index to find the row by time: the store keeps its
			// expiry key.
			j.kbuf = joinExpiryKey(j.kbuf[:0], ts, key, off[:])
			own.Put(j.kbuf, nil)
			j.nextExpiry[side] = min(j.nextExpiry[side], ts)
			return nil
		}
		x.add(key, ts, off[:], false)
		if x.rows > keptIndexRows {
			j.dropIndex(side)
		}
	}
	return nil
}

func joinExpiryKey(buf []byte, ts int64, key, off []byte) []byte {
	buf = appendTime(append(buf, joinExpiryTag), ts)
	return append(append(buf, key...), off...)
}

// dropIndex lets go of a side's index past its bound, where it costs more
// memory than the iterators it saves: the side's matches are scanned in
// the store until the operator opens again, and its expiry scans the
// expiry keys, so the rows kept without one get theirs now.
func (j *joinOp) dropIndex(side int) {
	s := j.stores[side]
	for _, k := range j.kept[side].keys {
		for _, r := range k.rows {
			if !r.expiry {
				j.kbuf = joinExpiryKey(j.kbuf[:0], r.ts, []byte(k.key), r.off[:])
				s.Put(j.kbuf, nil)
			}
		}
	}
	j.kept[side] = nil
	j.nextExpiry[side] = math.MinInt64 // learnt again by the next scan
}

// match returns the rows the other side keeps for key within [from, to],
// in the store's order, from its index, or by a scan of its store when it
// has none.
func (j *joinOp) match(other int, key []byte, from, to int64) ([]joinMatch, error) {
	j.matches = j.matches[:0]
	s := j.stores[other]
	if x := j.kept[other]; x != nil {
		if j.addMatch == nil {
			j.addMatch = j.appendMatch
		}
		var err error
		j.kbuf, err = x.between(s, key, from, to, j.kbuf, j.addMatch)
		if err != nil {
			return j.matches, fmt.Errorf("join %s: %w", j.node.Text, err)
		}
		return j.matches, nil
	}
	matches := j.matches
	var start, end []byte
	j.kbuf, start, end = dataKeyRange(j.kbuf, key, from, to)
	var derr error
	err := s.RangeBetween(start, end, func(k, v []byte) bool {
		cols, _, err := types.DecodeValues(v)
		if err != nil {
			derr = fmt.Errorf("join %s: stored row: %w", j.node.Text, err)
			return false
		}
		m := joinMatch{cols: cols, ts: readTime(k[len(k)-16:])}
		copy(m.off[:], k[len(k)-8:])
		matches = append(matches, m)
		return true
	})
	if err == nil {
		err = derr
	}
	return matches, err
}

// appendMatch adds a kept row to j.matches (match's callback).
func (j *joinOp) appendMatch(r *keptRow) error {
	j.matches = append(j.matches, joinMatch{off: r.off, cols: r.cols, ts: r.ts})
	return nil
}

func (j *joinOp) sideSpec(side int) JoinSide {
	if side == 0 {
		return j.node.Left
	}
	return j.node.Right
}

func pendingKey(buf []byte, ts int64, key, off []byte) []byte {
	buf = appendTime(append(buf, joinPendingTag), ts)
	return append(append(buf, key...), off...)
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// closeWindows emits the outer rows whose windows closed without a match
// and forgets rows no new row can match.
func (j *joinOp) closeWindows(tc *TaskContext) error {
	n := j.node
	if tc.StreamTime == math.MinInt64 {
		return nil
	}
	for side := 0; side < 2; side++ {
		s := j.stores[side]
		if s == nil {
			continue
		}
		if n.Type.outer(side) && !n.Legacy {
			// Rows whose window closed: ts + lookback + grace < stream time.
			limit := tc.StreamTime - j.lookback(side) - n.Grace
			var due [][]byte
			if limit > j.nextPending[side] {
				next, err := scanDue(s, joinPendingTag, j.nextPending[side], limit, func(k []byte) { due = append(due, k) })
				if err != nil {
					return err
				}
				j.nextPending[side] = next
			}
			for _, pk := range due {
				ts := readTime(pk[1:9])
				rest := pk[9:]
				key, off := rest[:len(rest)-8], rest[len(rest)-8:]
				dk := appendTime(append([]byte{joinDataTag}, key...), ts)
				dk = append(dk, off...)
				v, ok, err := s.Get(dk)
				if err != nil {
					return err
				}
				s.Delete(pk)
				if !ok {
					continue
				}
				cols, _, err := types.DecodeValues(v)
				if err != nil {
					return fmt.Errorf("join %s: stored row: %w", n.Text, err)
				}
				if err := j.emit(tc, side, cols, nil, cols[j.sideSpec(side).KeyCol], ts, false); err != nil {
					return err
				}
			}
		}
		if err := j.expireRows(side, tc.StreamTime); err != nil {
			return err
		}
	}
	return nil
}

// pendingAmongExpired reports whether an outer side's store holds a row
// that waits to be emitted alone (its pending key) among the rows the
// side no longer keeps. The owner emits such rows before it expires
// them, so normally there is none; one edge (a side whose lookback is 0)
// can leave one.
func (j *joinOp) pendingAmongExpired(side int, streamTime int64) (bool, error) {
	if !j.node.Type.outer(side) || j.node.Legacy || j.observed[side] == math.MinInt64 {
		return false, nil
	}
	limit := j.expiryLimit(side, streamTime)
	found := false
	err := j.stores[side].RangeBetween([]byte{joinPendingTag}, appendTime([]byte{joinPendingTag}, limit), func(_, _ []byte) bool {
		found = true
		return false
	})
	if err != nil {
		return false, fmt.Errorf("join %s: read pending rows: %w", j.node.Text, err)
	}
	return found, nil
}

// expiryLimit is the time below which a stream side forgets its rows:
// observed - retention + 1, and for an outer side also below the window
// closed at streamTime (see expireRows).
func (j *joinOp) expiryLimit(side int, streamTime int64) int64 {
	limit := j.observed[side] - j.retention() + 1
	if n := j.node; n.Type.outer(side) && !n.Legacy {
		limit = min(limit, streamTime-j.lookback(side)-n.Grace)
	}
	return limit
}

// expireRows forgets the rows a stream side no longer keeps (see
// observed). They leave the store by a local delete, without changelog
// tombstones (state.Store.Expire): the join's changelog is
// compact,delete and ages them out. A restore may bring some back; the
// side's observed time comes back with them, so they match nothing
// (Process bounds matches by it), and Open expires them again.
//
// An outer side keeps a row until its window has closed at streamTime
// too, so that closeWindows emits it alone first when it found no match:
// with a lookback of 0 on the other side its time can pass retention
// before its window closes.
func (j *joinOp) expireRows(side int, streamTime int64) error {
	s := j.stores[side]
	if j.observed[side] == math.MinInt64 {
		return nil
	}
	limit := j.expiryLimit(side, streamTime)
	if x := j.kept[side]; x != nil {
		// The index knows the rows by time: delete them where they
		// are, with no scan of the expiry keys.
		x.expire(limit, func(key string, ts int64, off []byte, expiry bool) {
			kb := appendTime(append(append(j.kbuf[:0], joinDataTag), key...), ts)
			s.Expire(append(kb, off...))
			if expiry {
				kb = joinExpiryKey(kb[:0], ts, []byte(key), off)
				s.Expire(kb)
			}
			j.kbuf = kb
		})
		return nil
	}
	if limit <= j.nextExpiry[side] {
		return nil // nothing kept is old enough to forget
	}
	var old [][]byte
	next, err := scanDue(s, joinExpiryTag, j.nextExpiry[side], limit, func(k []byte) { old = append(old, k) })
	if err != nil {
		return err
	}
	j.nextExpiry[side] = next
	for _, ek := range old {
		ts := readTime(ek[1:9])
		rest := ek[9:]
		dk := appendTime(append([]byte{joinDataTag}, rest[:len(rest)-8]...), ts)
		s.Expire(append(dk, rest[len(rest)-8:]...))
		s.Expire(ek)
	}
	return nil
}

// scanDue calls fn with a copy of each key under tag (a prefix ordered
// by event time, then anything) whose time is below limit, and returns
// the time of the first key at or above it: math.MaxInt64 when there is
// none. One iterator serves both, so a caller can skip the next scans
// until limit passes that time. from is a lower bound of the keys' times
// (math.MinInt64: none known): the scan starts there, so it does not step
// again over the keys earlier scans deleted.
func scanDue(s *state.Store, tag byte, from, limit int64, fn func(k []byte)) (int64, error) {
	next := int64(math.MaxInt64)
	var bad error
	start := []byte{tag}
	if from != math.MinInt64 {
		start = appendTime(start, from)
	}
	err := s.RangeBetween(start, []byte{tag + 1}, func(k, _ []byte) bool {
		if len(k) < 9 {
			bad = fmt.Errorf("join store key %x: too short for a time", k)
			return false
		}
		if ts := readTime(k[1:9]); ts >= limit {
			next = ts
			return false
		}
		fn(bytes.Clone(k))
		return true
	})
	if err == nil {
		err = bad
	}
	return next, err
}

func (j *joinOp) AdvanceTime(tc *TaskContext) error {
	if j.node.streams() {
		if err := j.closeWindows(tc); err != nil {
			return err
		}
	}
	return j.forward.AdvanceTime(tc)
}

// tableRestore turns the records of a table's own topic into the entries
// a join keeps for it: the encoded key and the row with its event time.
// A record that cannot be read is left out, as processing skips it.
func tableRestore(spec *SourceSpec) (func(key, value []byte, ts int64) (k, v []byte, ok bool), error) {
	dec, err := newDecoder(spec)
	if err != nil {
		return nil, err
	}
	// A table is joined on its key (and window): its first columns.
	var window []int
	if spec.Window != NotWindowed {
		row := spec.RowSchema()
		window = []int{row.Find(ColWindowStart), row.Find(ColWindowEnd)}
	}
	nkeys := len(spec.KeyCols)
	return func(key, value []byte, ts int64) ([]byte, []byte, bool) {
		var row Row
		rec := Record{Topic: spec.Topic, Key: key, Value: value, Timestamp: ts}
		if err := dec.decode(&rec, &row); err != nil || nkeys == 0 || row.Cols[0] == nil {
			return nil, nil, false
		}
		k := joinTableKey(nil, row.Cols, nkeys, window)
		if row.Tombstone {
			return k, nil, true
		}
		return k, EncodeTableRow(nil, row.Ts, row.Cols), true
	}, nil
}

// changelog is where a restore of the store's partition reads: its
// changelog topic, or the table topic it reads records of as they are.
func (spec StoreSpec) changelog(partition int32) (state.Changelog, error) {
	log := state.Changelog{Topic: spec.Changelog, Partition: partition}
	if spec.FromSource != nil {
		tr, err := tableRestore(spec.FromSource)
		if err != nil {
			return log, err
		}
		log.Transform = tr
	}
	return log, nil
}
