package exec

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Per-member state. An aggregate function whose accumulator is a set and
// whose result is the set's size (expr.Aggregate.Member: COUNT_DISTINCT)
// keeps, in a time-windowed or unwindowed aggregation, the count as its
// accumulator and each member as a state entry of its own beside the
// group's (Flink keeps its distinct aggregates in a MapState alike). A
// record then looks its value up (in what the cache knows of the group,
// else one small entry of the store) and, when it is new, adds one; the
// cache holds the new entries, as it holds the count they raised, until
// its WriteBack puts the interval's new members into the store at once.
// The group's state stays a few bytes, so the cache keeps it decoded
// cheaply, an eviction writes the count and never the set, and the
// changelog carries members, not sets, so a restore rebuilds the same
// entries.
//
// The entries of one group and aggregate are contiguous, after the
// group's own key in the same store partition, with an empty value:
//
//	not windowed:  0x02 ‖ group key ‖ uvarint(aggregate index) ‖ member
//	time windows:  start ‖ 0xFF ‖ group key ‖ uvarint(aggregate index) ‖ member
//
// The group key (types.AppendValues) is self-delimiting, so no group's
// prefix is another's. Unwindowed, 0x02 is a tag of its own beside the
// group entries (0x00) and the time index (0x01), so ranges over either
// never meet members. With time windows every key starts with its
// window's start, so a window's members sort right after its groups
// (a group key starts with its column count, a uvarint whose first byte is
// 0xFF only from 255 columns: such a key keeps its sets whole, see
// Open), and expiring or closing a window's keys by start takes its
// members with them.
//
// State an earlier version wrote keeps the set in the accumulator; the
// accumulator's own type tag tells the layouts apart (a count is an
// int64, a set a map or a list), so no format marker is needed: a group
// read back with a set moves its members to entries and is rewritten
// with the count (migrateMembers). Result reads both.
const (
	tableMemberTag  = 0x02
	windowMemberTag = 0xFF
)

// memberKeyColumns is the most GROUP BY columns a time-windowed
// aggregation may have and keep members as entries: its group key's first
// byte (the column count) must not be windowMemberTag.
const memberKeyColumns = 127

// memberPrefix appends the prefix of the members of aggregate index i of
// the group whose state key is stateKey.
func (a *aggregate) memberPrefix(buf, stateKey []byte, i int) []byte {
	if a.node.Window == nil {
		buf = append(append(buf, tableMemberTag), stateKey[1:]...)
	} else {
		buf = append(append(append(buf, stateKey[:8]...), windowMemberTag), stateKey[8:]...)
	}
	return binary.AppendUvarint(buf, uint64(i))
}

// groupMembersPrefix appends the prefix of every member of the
// unwindowed group key gk.
func groupMembersPrefix(buf, gk []byte) []byte {
	return append(append(buf, tableMemberTag), gk...)
}

// isWindowMember reports whether a time-window store key (start ‖ rest)
// is a member entry rather than a window's group.
func isWindowMember(k []byte) bool { return len(k) > 8 && k[8] == windowMemberTag }

// setMembers decides which aggregate calls keep their members as entries:
// those declaring Member, in an aggregation of stream records (members
// carry no multiplicity, so a table's retraction could not take one out)
// whose group keys cannot be taken for members.
func (a *aggregate) setMembers() {
	n := a.node
	if n.Changes != nil || (n.Window != nil && len(n.KeyCols) > memberKeyColumns) {
		return
	}
	for i, call := range n.Aggs {
		if call.Agg.Member == nil {
			continue
		}
		if a.members == nil {
			a.members = make([]bool, len(n.Aggs))
		}
		a.members[i] = true
	}
}

// addMembers adds the members row brings to the group's counts: a member
// the group has is found in the cache's set or the store (unless the cache
// knows all the group's members), a new one is counted and noted in the
// cache, which writes its entry at its WriteBack.
func (a *aggregate) addMembers(e *aggEntry, stateKey []byte, cols []any) error {
	accs := e.accs
	for i, call := range a.node.Aggs {
		if !a.members[i] {
			continue
		}
		a.args = a.args[:0]
		for _, e := range call.Args {
			a.args = append(a.args, e(cols))
		}
		key, ok := call.Agg.Member(a.memberPrefix(a.memberKey[:0], stateKey, i), a.args)
		a.memberKey = key
		if !ok {
			continue
		}
		prefixLen := a.groupPrefixLen(stateKey)
		m := key[prefixLen:]
		known, absent := a.cache.hasMember(e, m)
		if known {
			continue
		}
		found := false
		if !absent {
			var err error
			if _, found, err = a.store.Get(key); err != nil {
				return fmt.Errorf("aggregate %s: read member: %w", a.node.Store, err)
			}
		}
		if found {
			a.cache.addMember(e, m)
			continue
		}
		// The entry reaches the store with the group's count, at the
		// cache's WriteBack: until then only the cache has either.
		a.cache.addNewMember(e, key, prefixLen)
		n, _ := accs[i].(int64)
		accs[i] = n + 1
	}
	return nil
}

// groupPrefixLen is the length of the prefix every member entry of the
// group whose state key is stateKey starts with.
func (a *aggregate) groupPrefixLen(stateKey []byte) int {
	if a.node.Window == nil {
		return len(stateKey) // tableMemberTag for tableDataTag
	}
	return len(stateKey) + 1 // windowMemberTag after the start
}

// migrateMembers turns the sets an earlier version kept in accs into
// member entries and counts, and reports whether it changed any.
func (a *aggregate) migrateMembers(stateKey []byte, accs []any) (bool, error) {
	changed := false
	for i, call := range a.node.Aggs {
		if !a.members[i] {
			continue
		}
		if _, ok := accs[i].(int64); ok {
			continue
		}
		if call.Agg.Members == nil {
			return false, fmt.Errorf("aggregate %s: %s keeps members but cannot list a stored set", a.node.Store, call.Text)
		}
		prefix := a.memberPrefix(nil, stateKey, i)
		var n int64
		for _, m := range call.Agg.Members(accs[i]) {
			a.store.Put(append(bytes.Clone(prefix), m...), nil)
			n++
		}
		accs[i] = n
		changed = true
	}
	return changed, nil
}

// deleteMembers deletes every member entry of the unwindowed group key gk.
func (a *aggregate) deleteMembers(gk []byte) error {
	prefix := groupMembersPrefix(nil, gk)
	var keys [][]byte
	err := a.store.Range(prefix, func(k, _ []byte) bool {
		keys = append(keys, bytes.Clone(k))
		return true
	})
	if err != nil {
		return fmt.Errorf("aggregate %s: delete members: %w", a.node.Store, err)
	}
	for _, k := range keys {
		a.deleteState(k)
	}
	return nil
}
