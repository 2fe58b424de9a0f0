package exec

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/state"
)

// TestOverlayBoundCommits: a store partition whose overlay reaches
// overlayMemoryLimit makes the loop commit at once (overlayFull), and
// that exactly-once commit writes Badger instead of holding the state
// (commitState), so the overlay starts again from nothing; one under the
// bound is held, as before, until the second of stateWriteInterval.
func TestOverlayBoundCommits(t *testing.T) {
	db := openState(t, t.TempDir())
	defer db.Close()
	store := db.Store("agg", 0)
	task := &Task{stores: []taskStore{{store: store}}}
	r := &KafkaRunner{tasks: map[topicPartition]*Task{{"in", 0}: task}, cfg: KafkaConfig{Threads: 1}}
	c := &exactlyOnce{r: r}

	value := make([]byte, 18)
	keys := 0
	put := func() {
		store.Put(fmt.Appendf(nil, "window-%08d/auction-%06d", keys, keys), value)
		keys++
	}
	// commit runs what an exactly-once commit does with the state after
	// the transaction: the changelog takes the writes, then commitState.
	commit := func() {
		t.Helper()
		cp, err := store.ProduceChangelog(context.Background(), nil, state.Changelog{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		c.stateWritten = time.Now() // a Badger write just happened
		if err := c.commitState([]*Task{task}, [][]state.Checkpoint{{cp}}, false); err != nil {
			t.Fatal(err)
		}
	}

	// Filled to just under the bound: no commit is forced, and the
	// commit that comes with the interval holds the writes in memory.
	for {
		put()
		if store.OverlayMemory() >= overlayMemoryLimit {
			t.Fatalf("the overlay passed the bound at %d keys before the check", keys)
		}
		probe := store.OverlayMemory() + store.OverlayMemory()/int64(keys)
		if probe >= overlayMemoryLimit {
			break
		}
	}
	if r.overlayFull() {
		t.Fatalf("overlayFull with %d of %d bytes", store.OverlayMemory(), overlayMemoryLimit)
	}
	under := store.OverlayMemory()
	commit()
	if got := store.OverlayMemory(); got != under {
		t.Errorf("a commit under the bound left the overlay at %d bytes, want %d (held)", got, under)
	}
	// One key more passes the bound: the loop commits now, and the
	// commit writes Badger.
	put()
	if !r.overlayFull() {
		t.Fatalf("overlayFull false with %d of %d bytes", store.OverlayMemory(), overlayMemoryLimit)
	}
	commit()
	if got := store.OverlayMemory(); got != 0 {
		t.Errorf("the commit past the bound left %d bytes in the overlay, want 0 (written to Badger)", got)
	}
	if r.overlayFull() {
		t.Error("overlayFull after the commit that wrote Badger")
	}
	var read int
	if err := store.RangeCommitted(nil, func(_, _ []byte) bool { read++; return true }); err != nil {
		t.Fatal(err)
	}
	if read != keys {
		t.Errorf("committed keys after the write: %d, want %d", read, keys)
	}
}
