package main

import (
	"fmt"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"time"
)

// heapLiveMetric is the heap the last collection found live, the same
// moment a heap profile describes.
const heapLiveMetric = "/gc/heap/live:bytes"

// heapPeakCheck is how often the live heap is read, and heapPeakStep how
// much it must have grown past the last profile for another to be
// written: a profile costs a stop of the world's worth of work, so it is
// not rewritten for every few bytes of growth.
const (
	heapPeakCheck = 250 * time.Millisecond
	heapPeakStep  = 1.05
)

// startHeapProfile writes a pprof heap profile into file each time the
// live heap reaches a new high (by heapPeakStep), so the file ends up
// describing the process at its largest: peak RSS is what the memory
// targets measure, and a profile taken at exit would show a drained
// process. The returned function stops it. No file, no profile.
func startHeapProfile(file string) (func(), error) {
	if file == "" {
		return func() {}, nil
	}
	// Fail now, not at the first peak, when the file cannot be written.
	if err := writeHeapProfile(file); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sample := []metrics.Sample{{Name: heapLiveMetric}}
		var high uint64
		tick := time.NewTicker(heapPeakCheck)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() != metrics.KindUint64 {
				return
			}
			live := sample[0].Value.Uint64()
			if float64(live) < float64(high)*heapPeakStep {
				continue
			}
			high = live
			if err := writeHeapProfile(file); err != nil {
				fmt.Fprintln(os.Stderr, "sluice:", err)
				return
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}, nil
}

// writeHeapProfile replaces file with a heap profile, through a
// temporary file so that a reader never sees half of one.
func writeHeapProfile(file string) error {
	tmp := file + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("memprofile: %w", err)
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("memprofile: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("memprofile: %w", err)
	}
	if err := os.Rename(tmp, file); err != nil {
		return fmt.Errorf("memprofile: %w", err)
	}
	return nil
}
