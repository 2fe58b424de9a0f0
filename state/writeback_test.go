package state

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLastKey follows a store's greatest key through the overlay, a
// commit to Badger, deletes and a neighbouring store partition: the key
// reported is never below a live key.
func TestLastKey(t *testing.T) {
	db := openDB(t, t.TempDir())
	s := db.Store("s", 1)
	// Neighbours sort before and after the store partition's keys.
	db.Store("s", 0).Put([]byte("zz"), []byte("x"))
	db.Store("s", 2).Put([]byte("zz"), []byte("x"))
	db.Store("t", 1).Put([]byte("zz"), []byte("x"))
	for _, n := range []*Store{db.Store("s", 0), db.Store("s", 2), db.Store("t", 1)} {
		if err := n.Commit(Checkpoint{}); err != nil {
			t.Fatal(err)
		}
	}
	last := func() string {
		t.Helper()
		k, ok, known, err := s.LastKey()
		if err != nil || !known {
			t.Fatalf("LastKey: known %v, %v", known, err)
		}
		if !ok {
			return "(empty)"
		}
		return string(k)
	}
	var got []string
	got = append(got, last())
	s.Put([]byte("b"), []byte("1"))
	s.Put([]byte("a"), []byte("1"))
	got = append(got, last()) // overlay
	if err := s.Commit(Checkpoint{}); err != nil {
		t.Fatal(err)
	}
	got = append(got, last()) // Badger
	s.Put([]byte("c"), []byte("1"))
	got = append(got, last()) // overlay above Badger
	if err := s.Commit(Checkpoint{}); err != nil {
		t.Fatal(err)
	}
	s.Delete([]byte("c"))
	if err := s.Commit(Checkpoint{}); err != nil {
		t.Fatal(err)
	}
	got = append(got, last()) // c deleted in Badger
	s.Put([]byte("a2"), []byte("1"))
	got = append(got, last()) // overlay below Badger
	want := []string{"(empty)", "b", "b", "c", "b", "b"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("last keys (-want +got):\n%s", diff)
	}
}

// cacheOf is a WriteBack that holds key=value writes until the store
// asks for them.
type cacheOf struct {
	s       *Store
	pending map[string]string
}

func (c *cacheOf) WriteBack() {
	for k, v := range c.pending {
		c.s.Put([]byte(k), []byte(v))
	}
	clear(c.pending)
}

func (c *cacheOf) Discard() { clear(c.pending) }

// TestWriteBack checks when a store takes its cache's writes: before it
// hands out its pending writes and before a range, never on a Get, and
// that Discard reaches the cache.
func TestWriteBack(t *testing.T) {
	db := openDB(t, t.TempDir())
	s := db.Store("s", 0)
	c := &cacheOf{s: s, pending: map[string]string{}}
	s.SetWriteBack(c)
	c.pending["a"] = "1"
	if _, ok := mustGet(t, s, "a"); ok {
		t.Fatal("Get took the cache's write")
	}
	if n := s.PendingCount(); n != 1 {
		t.Fatalf("PendingCount = %d, want 1", n)
	}
	c.pending["b"] = "2"
	var keys []string
	for _, ch := range s.Pending() {
		keys = append(keys, fmt.Sprintf("%s=%s", ch.Key, ch.Value))
	}
	if diff := cmp.Diff([]string{"a=1", "b=2"}, keys); diff != "" {
		t.Fatalf("pending (-want +got):\n%s", diff)
	}
	c.pending["c"] = "3"
	if diff := cmp.Diff([]kv{{"a", "1"}, {"b", "2"}, {"c", "3"}}, collect(t, s, nil)); diff != "" {
		t.Fatalf("range (-want +got):\n%s", diff)
	}
	c.pending["d"] = "4"
	s.Discard()
	if len(c.pending) != 0 {
		t.Fatalf("the cache kept %v after Discard", c.pending)
	}
	s.DropWriteBack(&cacheOf{})
	c.pending["e"] = "5"
	if n := s.PendingCount(); n != 1 {
		t.Fatalf("PendingCount = %d after another cache's drop, want 1", n)
	}
	s.DropWriteBack(c)
	c.pending["f"] = "6"
	if diff := cmp.Diff([]kv{{"e", "5"}}, collect(t, s, nil)); diff != "" {
		t.Fatalf("range after DropWriteBack (-want +got):\n%s", diff)
	}
}
