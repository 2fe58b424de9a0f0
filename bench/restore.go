package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/state"
)

// restoreCmd is `bench restore`.
type restoreCmd struct {
	Keys                   int    `help:"Distinct keys in the changelog (default 1,000,000; 200,000 with --quick)."`
	Runs                   int    `default:"3" help:"Timed runs of each contender; medians are reported."`
	Chunk                  int    `default:"50000" help:"Keys per Flush while filling the changelog (one commit interval's overlay)."`
	Dir                    string `type:"path" help:"Parent of the Badger directories (default: the system temp dir)."`
	CPUProfile             string `name:"cpuprofile" type:"path" help:"After the timed runs, profile one more cold restore (S) into this file."`
	FetchMaxPartitionBytes int32  `help:"kgo.FetchMaxPartitionBytes for R and S alike (0: franz-go's default, 1 MiB), to see what fetch size does."`
}

const (
	storeName  = "agg"
	sourceName = "bench-source/0"
	keyLen     = 16
	valueLen   = 40
)

func (r *restoreCmd) Run(ctx context.Context, c *cli) error {
	if r.Keys == 0 {
		r.Keys = 1_000_000
		if c.Quick {
			r.Keys = 200_000
		}
	}
	if r.Runs < 1 || r.Keys < 1 || r.Chunk < 1 {
		return errors.New("--keys, --runs and --chunk must be positive")
	}
	cl, err := openCluster(ctx, c.Brokers)
	if err != nil {
		return err
	}
	defer cl.Close()
	conn := cl.connOpts()
	if r.FetchMaxPartitionBytes > 0 {
		conn = append(conn, kgo.FetchMaxPartitionBytes(r.FetchMaxPartitionBytes))
	}

	topic := fmt.Sprintf("bench-restore-%x-changelog", time.Now().UnixNano()&0xffffff)
	log := state.Changelog{Topic: topic, Partition: 0}
	fmt.Printf("restore: %d keys, broker %s\n", r.Keys, cl.Name)
	fmt.Printf("machine: %s\n", machine())
	t0 := time.Now()
	end, err := fillChangelog(ctx, cl.connOpts(), log, r.Keys, r.Chunk, r.Dir)
	if err != nil {
		return fmt.Errorf("fill changelog: %w", err)
	}
	defer deleteTopic(cl.connOpts(), topic)
	fmt.Printf("setup: %s filled with %d records (end offset %d) in %s\n\n", topic, r.Keys, end, time.Since(t0).Round(time.Millisecond))

	b := &restoreBench{conn: conn, log: log, keys: int64(r.Keys), end: end, dir: r.Dir}
	// Warm-up round, untimed: page cache, heap and the broker's buffers
	// settle, and the results are checked for correctness once.
	if _, err := b.raw(ctx); err != nil {
		return fmt.Errorf("warm-up R: %w", err)
	}
	if _, _, _, _, err := b.coldWarm(ctx, true); err != nil {
		return fmt.Errorf("warm-up S: %w", err)
	}

	var rs, ss, ws []sample
	var opens, durables []float64
	for i := range r.Runs {
		rsm, err := measure(func() (int64, error) { return b.raw(ctx) })
		if err != nil {
			return fmt.Errorf("R run %d: %w", i+1, err)
		}
		s, w, open, durable, err := b.coldWarm(ctx, false)
		if err != nil {
			return fmt.Errorf("S run %d: %w", i+1, err)
		}
		rs, ss, ws, opens, durables = append(rs, rsm), append(ss, s), append(ws, w), append(opens, open.Seconds()), append(durables, durable.Seconds())
		fmt.Printf("run %d: R %9.0f rec/s   S %9.0f rec/s   S/R %.2f   durable after %s   W %s (open %s)\n", i+1, rsm.Rate(), s.Rate(), s.Rate()/rsm.Rate(),
			durable.Round(time.Millisecond), w.Elapsed.Round(time.Microsecond), open.Round(time.Microsecond))
	}

	if r.CPUProfile != "" {
		if err := b.profile(ctx, r.CPUProfile); err != nil {
			return fmt.Errorf("profile: %w", err)
		}
		fmt.Printf("\nCPU profile of one extra S run: %s (go tool pprof -top %s)\n", r.CPUProfile, r.CPUProfile)
	}

	rep := summarize(rs, ss, ws)
	rep.warmOpen = time.Duration(median(opens) * float64(time.Second))
	rep.durable = time.Duration(median(durables) * float64(time.Second))
	fmt.Println()
	rep.print(os.Stdout, cl.Name, r.Keys, r.Runs)
	if err := mergeResults(c.Results, map[string]result{
		"T9":                   {Value: round3(rep.ratio), Target: 0.5},
		"restore_warm_seconds": {Value: round3(rep.warm.Seconds()), Target: 1.0},
	}); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	fmt.Printf("\nwrote %s\n", c.Results)
	return nil
}

// restoreBench holds what the contenders share: the filled changelog.
type restoreBench struct {
	conn []kgo.Opt
	log  state.Changelog
	keys int64
	end  int64
	dir  string
}

// raw is contender R: consume the changelog partition from its start to the
// end offset with franz-go and nothing else. It uses the isolation level
// and control-record setting Restore uses, so both fetch the same bytes.
func (b *restoreBench) raw(ctx context.Context) (int64, error) {
	cl, err := kgo.NewClient(append(slices.Clone(b.conn),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{b.log.Topic: {b.log.Partition: kgo.NewOffset().AtStart()}}),
	)...)
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListCommittedOffsets(ctx, b.log.Topic)
	if err != nil {
		return 0, err
	}
	lo, ok := ends.Lookup(b.log.Topic, b.log.Partition)
	if !ok || lo.Err != nil {
		return 0, fmt.Errorf("end offset: %v", lo.Err)
	}
	var n int64
	for next := int64(0); next < lo.Offset; {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return n, err
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) { ferr = err })
		if ferr != nil {
			return n, ferr
		}
		fs.EachRecord(func(r *kgo.Record) {
			next = r.Offset + 1
			if r.Offset < lo.Offset && !r.Attrs.IsControl() {
				n++
			}
		})
	}
	if n != b.keys {
		return n, fmt.Errorf("consumed %d records, want %d", n, b.keys)
	}
	return n, nil
}

// coldWarm runs contender S (a fresh Badger directory, Restore of the whole
// changelog) and then W (clean close, reopen, Restore of the empty tail).
// W's sample times the reopen and the restore together: both are part of a
// warm restart. With check it also verifies what was restored.
//
// S ends when Restore returns: the store serves reads from then on, while
// Badger is written in the background. durable is S plus the wait for that
// (DB.Close waits for it), the time until a restart would find the
// checkpoint.
func (b *restoreBench) coldWarm(ctx context.Context, check bool) (cold, warm sample, warmOpen, durable time.Duration, err error) {
	dir, err := os.MkdirTemp(b.dir, "sluice-restore-*")
	if err != nil {
		return cold, warm, 0, 0, err
	}
	defer os.RemoveAll(dir)

	db, err := openDB(dir)
	if err != nil {
		return cold, warm, 0, 0, err
	}
	cold, err = measure(func() (int64, error) {
		return db.Store(storeName, b.log.Partition).Restore(ctx, b.conn, b.log, nil)
	})
	if err == nil && cold.Records != b.keys {
		err = fmt.Errorf("cold restore applied %d records, want %d", cold.Records, b.keys)
	}
	if err == nil && check {
		err = verify(db.Store(storeName, b.log.Partition), b.keys, b.end)
	}
	t0 := time.Now()
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	durable = cold.Elapsed + time.Since(t0)
	if err != nil {
		return cold, warm, 0, 0, err
	}

	warm, err = measure(func() (int64, error) {
		t0 := time.Now()
		db, err = openDB(dir)
		warmOpen = time.Since(t0)
		if err != nil {
			return 0, err
		}
		return db.Store(storeName, b.log.Partition).Restore(ctx, b.conn, b.log, nil)
	})
	if err == nil && warm.Records != 0 {
		err = fmt.Errorf("warm restore applied %d records, want 0 (the tail is empty)", warm.Records)
	}
	if err == nil && check {
		err = verify(db.Store(storeName, b.log.Partition), b.keys, b.end)
	}
	if db != nil {
		if cerr := db.Close(); err == nil {
			err = cerr
		}
	}
	return cold, warm, warmOpen, durable, err
}

// profile runs one more cold restore under the CPU profiler.
func (b *restoreBench) profile(ctx context.Context, path string) error {
	dir, err := os.MkdirTemp(b.dir, "sluice-restore-prof-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := openDB(dir)
	if err != nil {
		return err
	}
	defer db.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		return err
	}
	_, err = db.Store(storeName, b.log.Partition).Restore(ctx, b.conn, b.log, nil)
	pprof.StopCPUProfile()
	return err
}

func openDB(dir string) (*state.DB, error) {
	return state.Open(state.Options{Dir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
}

// verify checks a restored store: every key with its value, and a checkpoint
// at the changelog's end carrying the last flush's source offsets.
func verify(st *state.Store, keys, end int64) error {
	var n int64
	var bad error
	if err := st.Range(nil, func(k, v []byte) bool {
		i, ok := keyIndex(k)
		if !ok || !bytes.Equal(v, value(i)) {
			bad = fmt.Errorf("restored %q = %x, unexpected", k, v)
			return false
		}
		n++
		return true
	}); err != nil {
		return err
	}
	if bad != nil {
		return bad
	}
	if n != keys {
		return fmt.Errorf("restored %d keys, want %d", n, keys)
	}
	cp, err := st.Checkpoint()
	if err != nil {
		return err
	}
	if cp.ChangelogOffset != end || cp.SourceOffsets[sourceName] != keys {
		return fmt.Errorf("checkpoint %+v, want changelog offset %d and %s=%d", cp, end, sourceName, keys)
	}
	return nil
}

// fillChangelog creates the compacted changelog topic and writes keys
// distinct keys to it the way an aggregate does: Put into a store's overlay
// and Flush every chunk keys (one commit interval), each flush carrying its
// source offset header. Keys are written in a scattered order, so each
// flush is sorted (the overlay is) but flushes interleave across the key
// space as a real aggregate's do. It returns the end offset.
func fillChangelog(ctx context.Context, conn []kgo.Opt, log state.Changelog, keys, chunk int, parent string) (int64, error) {
	prod, err := kgo.NewClient(append(slices.Clone(conn),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(5*time.Millisecond),            // as exec's runner
		kgo.ProducerBatchCompression(kgo.NoCompression()), // as exec's runner
	)...)
	if err != nil {
		return 0, err
	}
	defer prod.Close()
	adm := kadm.NewClient(prod)
	if err := state.EnsureTopic(ctx, adm, log.Topic, 1, -1, nil); err != nil {
		return 0, err
	}
	dir, err := os.MkdirTemp(parent, "sluice-restore-fill-*")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	db, err := openDB(filepath.Join(dir, "state"))
	if err != nil {
		return 0, err
	}
	defer db.Close()
	st := db.Store(storeName, log.Partition)
	perm := scatter(keys)
	for i := range keys {
		k := perm(i)
		st.Put(key(k), value(k))
		if (i+1)%chunk == 0 || i == keys-1 {
			if err := st.Flush(ctx, prod, log, map[string]int64{sourceName: int64(i + 1)}); err != nil {
				return 0, err
			}
		}
	}
	ends, err := adm.ListEndOffsets(ctx, log.Topic)
	if err != nil {
		return 0, err
	}
	lo, ok := ends.Lookup(log.Topic, log.Partition)
	if !ok || lo.Err != nil {
		return 0, fmt.Errorf("end offset: %v", lo.Err)
	}
	return lo.Offset, nil
}

func deleteTopic(conn []kgo.Opt, topic string) {
	withAdmin(conn, func(ctx context.Context, adm *kadm.Client) {
		_, _ = adm.DeleteTopics(ctx, topic)
	})
}

// withAdmin runs fn with an admin client of its own and ten seconds;
// the harness's clean-up calls ignore errors, so a client that cannot
// be made runs nothing.
func withAdmin(conn []kgo.Opt, fn func(context.Context, *kadm.Client)) {
	cl, err := kgo.NewClient(conn...)
	if err != nil {
		return
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fn(ctx, kadm.NewClient(cl))
}

// scatter returns a bijection of [0, n): i ↦ (i·m + c) mod n with m coprime
// to n.
func scatter(n int) func(int) int {
	m := 1_000_003 % n
	for m == 0 || gcd(m, n) != 1 {
		m++
	}
	return func(i int) int { return int((int64(i)*int64(m) + 12_345) % int64(n)) }
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// key is the 16-byte group key of aggregate entry i.
func key(i int) []byte { return fmt.Appendf(make([]byte, 0, keyLen), "auction-%08d", i) }

func keyIndex(k []byte) (int, bool) {
	var i int
	if _, err := fmt.Sscanf(string(k), "auction-%08d", &i); err != nil {
		return 0, false
	}
	return i, true
}

// value is the 40-byte state of aggregate entry i: count, sum, min, max and
// the last event time, as an aggregate of bids would keep them.
func value(i int) []byte {
	b := make([]byte, 0, valueLen)
	b = binary.BigEndian.AppendUint64(b, uint64(i%997+1))
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(float64(i)*1.25))
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(float64(i%101)))
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(float64(i%101+500)))
	b = binary.BigEndian.AppendUint64(b, uint64(1_700_000_000_000+int64(i)*37))
	return b
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }
