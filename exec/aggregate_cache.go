package exec

import (
	"bytes"

	"github.com/sluice-sql/sluice/state"
)

// DefaultAggCacheBytes bounds what one aggregate's cache holds per store
// partition (its estimate of keys, encoded values and per-entry
// overhead) when the query sets no statestore.cache.max.bytes: the hot
// keys and windows, about 5,000 of COUNT and SUM. Measured on the
// Nexmark aggregation (docs/benchmarks.md), 1 MB gave the best rate per
// CPU-second and left peak RSS where it was; 4 MB added about 10 MB of
// RSS and no speed, 256 KB lost a tenth of the speed.
const DefaultAggCacheBytes = 1 << 20

// cacheLimit is the bound of the aggregate's cache: the node's, the
// default when it sets none, 0 (no entry kept beyond the record being
// folded) when it turns the cache off.
func (n *AggregateNode) cacheLimit() int64 {
	switch {
	case n.CacheBytes == 0:
		return DefaultAggCacheBytes
	case n.CacheBytes < 0:
		return 0
	}
	return n.CacheBytes
}

// aggEntryOverhead is what an entry costs beyond its key and encoded
// value: the map slot, the entry, the accumulator slice and its boxed
// values.
const aggEntryOverhead = 160

// aggCache keeps an aggregate's accumulators decoded, by state key, so a
// record folds into Go values: the store sees a key's encoded state once
// per commit interval (state.WriteBack), not once per record. It is the
// store's WriteBack, so the changelog, commits and the aggregate's own
// scans (closing and expiring windows) see everything it holds; its
// changed entries are never in Kafka or Badger until then, so an abort or
// a crash loses only what was not committed, as before.
//
// The cache also knows which keys the store cannot hold, so that a new
// window or key costs no read of Badger: every key of the store greater
// than bound is one of its entries or one it evicted (listed in evicted).
// That holds from Open (bound is the store's last key), as the cache
// writes only its own entries, and it notes every key it evicts after
// the store had it. Time windows' keys begin with their start, so a new
// window lies above bound; and with hopping windows, whose open windows
// take new keys of many starts at once, a new key of a window the cache
// evicted other keys of is still known absent. When the evicted keys
// fill their bound (evictedLimit), bound rises to the greatest of them
// and the list starts again.
type aggCache struct {
	store *state.Store
	// encode lays an entry's state out as the store keeps it.
	encode  func(buf []byte, maxTs int64, accs []any) []byte
	entries map[string]*aggEntry
	// changed lists the entries folded into since the last WriteBack.
	changed []*aggEntry
	// queue holds the entries in the order the clock hand visits them
	// when evicting: an entry used since its last visit gets a second
	// round, so evictions take cold keys and old windows first.
	queue []*aggEntry
	bytes int64
	limit int64
	buf   []byte
	// known says bound holds (the store's keys above it are all
	// entries or in evicted); a nil bound with known set means above
	// every key.
	bound []byte
	known bool
	// evicted holds the keys above bound that the cache evicted once the
	// store had them (with their entries' key strings); evictedBytes is
	// what it costs, bounded by evictedLimit, and evictedMax its greatest
	// key.
	evicted      map[string]struct{}
	evictedBytes int64
	evictedMax   []byte
	// groups holds, by state key, what the cache knows of each group's
	// member entries (aggregate_members.go), kept while its entry comes and
	// goes: members are small, so a group's outlive its accumulators in
	// the cache. memberBytes is what they hold, bounded by memberLimit.
	groups      map[string]*groupMembers
	memberBytes int64
	memberLimit int64
	// unwritten lists the groups with members added since the last
	// WriteBack that the store does not have yet (write-back, as for
	// accumulators): a new member costs a map insert, and the store
	// takes the interval's new members at once.
	unwritten []*groupMembers
	keyBuf    []byte
}

// evictedOverhead is what an evicted key costs in evicted beyond its
// bytes: its map slot and string header.
const evictedOverhead = 40

// evictedLimitFactor sizes the evicted keys' bound against the cache's:
// a quarter of it, some 5,000 keys of 1 MB's worth of COUNT and SUM.
const evictedLimitFactor = 4

// memberOverhead is what a known member costs beyond its bytes: its map
// slot and string header.
const memberOverhead = 40

// groupOverhead is what a group's members cost beyond themselves: the
// groups map's slot, the key and the set.
const groupOverhead = 120

// memberLimitFactor sizes what the cache knows of members against its
// bound for accumulators: a member costs some 50 bytes where an
// accumulator costs hundreds, and members outnumber accumulators by
// hundreds (Nexmark q16: each hot channel has thousands of bidders and
// auctions, each cold one tens).
const memberLimitFactor = 16

// groupMembers is what the cache knows of one group's member entries.
type groupMembers struct {
	// known holds member entries in the store (or its overlay), by their
	// key after the group's prefix (aggregate index and member).
	known map[string]struct{}
	// all says known holds every member entry of the group: the group had
	// no state when its entry came in, so it had no members, and every
	// one added since is known.
	all   bool
	bytes int64
	// prefix is the group's member-entry prefix in the store (set with
	// the first new member); newMembers holds the members added since
	// the last WriteBack, back to back (their keys after prefix), each
	// ending at its newEnds offset: known has them, the store not yet.
	prefix     []byte
	newMembers []byte
	newEnds    []int
}

// aggEntry is one key's (or window's) accumulators.
type aggEntry struct {
	key  string
	keyB []byte // key, for the store
	accs []any
	// maxTs is the latest event time folded in.
	maxTs int64
	// existed says the store had the key, or the cache wrote it.
	existed bool
	changed bool
	// used says the entry was looked up since the clock last passed it;
	// gone that it left the cache (evicted or deleted).
	used, gone bool
	// members is what the cache knows of the group's member entries (nil
	// until the aggregate asks); forgotMembers says the cache forgot some
	// of them since the entry came in.
	members       *groupMembers
	forgotMembers bool
	// size is what the entry counts toward the cache's bytes.
	size int64
}

var _ state.WriteBack = (*aggCache)(nil)

// newAggCache makes the cache of s and installs it as s's WriteBack.
func newAggCache(s *state.Store, limit int64, encode func([]byte, int64, []any) []byte) (*aggCache, error) {
	c := &aggCache{store: s, encode: encode, entries: make(map[string]*aggEntry), groups: make(map[string]*groupMembers),
		evicted: make(map[string]struct{}), limit: limit, memberLimit: limit * memberLimitFactor}
	last, ok, known, err := s.LastKey()
	if err != nil {
		return nil, err
	}
	c.known = known
	if ok {
		c.bound = last
	}
	s.SetWriteBack(c)
	return c, nil
}

// get returns the entry of key, or nil.
func (c *aggCache) get(key []byte) *aggEntry {
	e := c.entries[string(key)]
	if e != nil {
		e.used = true
	}
	return e
}

// absent reports that the store cannot hold key, which the cache lacks.
func (c *aggCache) absent(key []byte) bool {
	if !c.aboveBound(key) {
		return false
	}
	_, out := c.evicted[string(key)]
	return !out
}

// aboveBound reports that the store holds key only if the cache wrote it
// (bound holds and key lies above it).
func (c *aggCache) aboveBound(key []byte) bool {
	return c.known && (c.bound == nil || bytes.Compare(key, c.bound) > 0)
}

// noteEvicted notes that e, which the store holds, left the cache. When
// the noted keys fill their bound, bound rises to the greatest of them and
// the notes start again: every key they held is then at or below bound.
func (c *aggCache) noteEvicted(e *aggEntry) {
	if !c.aboveBound(e.keyB) {
		return
	}
	if _, ok := c.evicted[e.key]; ok {
		return // evicted before, read back, evicted again
	}
	c.evicted[e.key] = struct{}{}
	c.evictedBytes += int64(len(e.key)) + evictedOverhead
	if c.evictedMax == nil || bytes.Compare(e.keyB, c.evictedMax) > 0 {
		c.evictedMax = e.keyB
	}
	if c.evictedBytes > c.limit/evictedLimitFactor {
		c.bound = c.evictedMax
		c.forgetEvicted()
	}
}

// forgetEvicted empties the evicted keys.
func (c *aggCache) forgetEvicted() {
	clear(c.evicted)
	c.evictedBytes, c.evictedMax = 0, nil
}

// add makes an entry for key, read from the store (encLen: the size of
// its encoded state), making room first if the cache is full.
func (c *aggCache) add(key []byte, accs []any, maxTs int64, existed bool, encLen int) *aggEntry {
	if c.bytes >= c.limit {
		c.evict(c.limit / 2)
	}
	e := &aggEntry{key: string(key), keyB: bytes.Clone(key), accs: accs, maxTs: maxTs, existed: existed}
	e.size = int64(len(e.key)+encLen) + aggEntryOverhead
	c.bytes += e.size
	c.entries[e.key] = e
	c.queue = append(c.queue, e)
	return e
}

// changedEntry marks e as folded into since the last WriteBack.
func (c *aggCache) changedEntry(e *aggEntry) {
	if !e.changed {
		e.changed = true
		c.changed = append(c.changed, e)
	}
}

// drop forgets key: the aggregate deletes it from the store.
func (c *aggCache) drop(key []byte) {
	if g, ok := c.groups[string(key)]; ok {
		c.forgetGroup(string(key), g)
	}
	if _, ok := c.evicted[string(key)]; ok {
		delete(c.evicted, string(key))
		c.evictedBytes -= int64(len(key)) + evictedOverhead
	}
	e, ok := c.entries[string(key)]
	if !ok {
		return
	}
	// Still on the changed list and in the queue, it must not be
	// written back nor counted again.
	e.changed, e.gone = false, true
	c.bytes -= e.size
	delete(c.entries, e.key)
}

// expireBelow forgets every entry and group whose key is below bound,
// without writing them: windows past retention, which the aggregate
// expires from the store by a scan of what the store holds
// (Store.ScanForExpiry). Changed entries and new members the store
// does not have yet need no write only to be deleted. It returns how
// many of the entries the store lacks, which the scan will not find.
func (c *aggCache) expireBelow(bound []byte) (unstored int) {
	for k, g := range c.groups {
		if k < string(bound) {
			g.newMembers, g.newEnds = nil, nil // not to be written
			delete(c.groups, k)
			c.memberBytes -= g.bytes
		}
	}
	for k := range c.evicted {
		if k < string(bound) {
			delete(c.evicted, k)
			c.evictedBytes -= int64(len(k)) + evictedOverhead
		}
	}
	for k, e := range c.entries {
		if k >= string(bound) {
			continue
		}
		if !e.existed {
			unstored++
		}
		// Still on the changed list and in the queue, it must not be
		// written back nor counted again.
		e.changed, e.gone, e.members = false, true, nil
		c.bytes -= e.size
		delete(c.entries, k)
	}
	return unstored
}

// groupMembers returns what the cache knows of the members of e's group,
// starting from nothing (or, for a group without state, from knowing all)
// if it knows nothing yet.
func (c *aggCache) groupMembers(e *aggEntry) *groupMembers {
	if e.members != nil {
		return e.members
	}
	// A group without state when its entry came in had no members, and
	// every one since went through here.
	all := !e.existed && !e.forgotMembers
	g := c.groups[e.key]
	if g == nil || all {
		if g != nil {
			c.forgetGroup(e.key, g) // kept from before the group was deleted
		}
		g = &groupMembers{known: make(map[string]struct{}), all: all}
		g.bytes = int64(len(e.key)) + groupOverhead
		c.memberBytes += g.bytes
		c.groups[e.key] = g
	}
	e.members = g
	return g
}

// hasMember reports whether the member entry of e's group whose key
// after the group's prefix is m is in the store (known) or cannot be
// (absent).
func (c *aggCache) hasMember(e *aggEntry, m []byte) (known, absent bool) {
	g := c.groupMembers(e)
	if _, ok := g.known[string(m)]; ok {
		return true, false
	}
	return false, g.all
}

// addMember notes that the member entry m of e's group is in the store
// (or its overlay). When the members known fill their bound, the cache
// forgets whole groups', whichever the map yields first, down to half.
func (c *aggCache) addMember(e *aggEntry, m []byte) {
	c.learnMember(e, m)
}

// addNewMember notes a member the group did not have: key is its whole
// entry key, of which the first prefixLen bytes are the group's member
// prefix. The store gets the entry at the next WriteBack (or as the cache
// forgets the group), not now.
func (c *aggCache) addNewMember(e *aggEntry, key []byte, prefixLen int) {
	m := key[prefixLen:]
	g := c.learnMember(e, m)
	if g.prefix == nil {
		g.prefix = bytes.Clone(key[:prefixLen])
	}
	if len(g.newEnds) == 0 {
		c.unwritten = append(c.unwritten, g)
	}
	g.newMembers = append(g.newMembers, m...)
	g.newEnds = append(g.newEnds, len(g.newMembers))
}

// learnMember adds m to what the cache knows of e's group, making room
// first, and returns the group's record.
func (c *aggCache) learnMember(e *aggEntry, m []byte) *groupMembers {
	g := c.groupMembers(e)
	if c.memberBytes >= c.memberLimit {
		for k, other := range c.groups {
			if c.memberBytes <= c.memberLimit/2 {
				break
			}
			c.forgetGroup(k, other)
		}
		g = c.groupMembers(e) // a new one if its own was forgotten
	}
	g.known[string(m)] = struct{}{}
	size := int64(len(m)) + memberOverhead
	g.bytes += size
	c.memberBytes += size
	return g
}

// writeMembers puts g's members added since the last WriteBack into the
// store.
func (c *aggCache) writeMembers(g *groupMembers) {
	from := 0
	for _, end := range g.newEnds {
		c.keyBuf = append(append(c.keyBuf[:0], g.prefix...), g.newMembers[from:end]...)
		c.store.Put(c.keyBuf, nil)
		from = end
	}
	// Let go of the buffers: a group's next interval may bring none, and
	// what they hold is not counted toward the cache's bounds.
	g.newMembers, g.newEnds = nil, nil
}

// forgetGroup drops what the cache knows of group key's members; its
// entry, if cached, starts again from nothing.
// Members the store does not have yet are written first: only the cache
// holds them.
func (c *aggCache) forgetGroup(key string, g *groupMembers) {
	c.writeMembers(g)
	delete(c.groups, key)
	c.memberBytes -= g.bytes
	if e := c.entries[key]; e != nil && e.members == g {
		e.members, e.forgotMembers = nil, true
	}
}

// WriteBack encodes the changed entries into the store, and puts the
// members added since the last call.
func (c *aggCache) WriteBack() {
	for _, e := range c.changed {
		if e.changed {
			c.write(e)
		}
	}
	clear(c.changed)
	c.changed = c.changed[:0]
	for _, g := range c.unwritten {
		c.writeMembers(g) // none left if the cache forgot g meanwhile
	}
	clear(c.unwritten)
	c.unwritten = c.unwritten[:0]
}

// write puts e's state into the store.
func (c *aggCache) write(e *aggEntry) {
	e.changed = false
	e.existed = true
	c.buf = c.encode(c.buf[:0], e.maxTs, e.accs)
	c.store.Put(e.keyB, c.buf)
	size := int64(len(e.key)+len(c.buf)) + aggEntryOverhead
	c.bytes += size - e.size
	e.size = size
}

// Discard drops every entry: the store dropped its uncommitted writes.
// What the store still holds of the written-back entries is no longer
// in the cache, so the cache stops telling which keys are absent.
func (c *aggCache) Discard() {
	clear(c.entries)
	clear(c.changed)
	c.changed = c.changed[:0]
	clear(c.queue)
	c.queue = c.queue[:0]
	c.bytes = 0
	c.known = false
	c.forgetEvicted()
	clear(c.groups) // their writes may be among those dropped
	clear(c.unwritten)
	c.unwritten = c.unwritten[:0]
	c.memberBytes = 0
}

// evict drops entries until the cache holds at most target bytes, by the
// clock: an entry used since the hand last passed it goes round again.
// An entry changed since the last WriteBack is written to the store as it
// leaves; the others stay changed until the commit.
func (c *aggCache) evict(target int64) {
	head := 0
	for c.bytes > target && head < len(c.queue) {
		e := c.queue[head]
		c.queue[head] = nil
		head++
		switch {
		case e.gone:
		case e.used:
			e.used = false
			c.queue = append(c.queue, e)
		default:
			if e.changed {
				c.write(e) // its place on the changed list is skipped
			}
			e.gone = true
			c.bytes -= e.size
			delete(c.entries, e.key)
			if e.existed {
				c.noteEvicted(e)
			}
		}
	}
	c.queue = append(c.queue[:0], c.queue[head:]...)
}
