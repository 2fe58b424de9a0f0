package state

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

// A crash between Badger creating a memtable file and writing it leaves
// the file empty; opening the directory must still work (Badger's own
// Open fails once on it, dgraph-io/badger#2207).
func TestOpenAfterEmptyMemtableFile(t *testing.T) {
	dir := t.TempDir()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	db, err := Open(Options{Dir: dir, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	mems, _ := filepath.Glob(filepath.Join(dir, "*.mem"))
	empty := filepath.Join(dir, "00099.mem")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err = Open(Options{Dir: dir, Logger: quiet})
	if err != nil {
		t.Fatalf("open with an empty memtable file beside %d others: %v", len(mems), err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}
