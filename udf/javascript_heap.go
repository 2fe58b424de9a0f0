package udf

import (
	"runtime/metrics"
	"sync"
	"time"
)

// goja has no memory limit of its own and allocates from the Go heap the
// whole process shares, so sluice.udf.memory cannot bound one VM's
// memory. What it bounds instead is how much the process's live heap
// grows while one call runs: a watcher samples the heap every
// heapWatchTick and interrupts a call, still running at two samples, under
// which the live heap has grown by more than the limit since the first.
// A call shorter than a tick is never looked at (and costs the watcher
// nothing); a runaway allocation loop is stopped within a few ticks of
// the garbage collector seeing its memory live. It cannot stop a single
// allocation (new Uint8Array(n) or 'x'.repeat(n) of a huge n happens
// before any check), and memory the rest of the process makes live during
// a long call counts too.
const heapWatchTick = 5 * time.Millisecond

// heapLiveMetric is the heap the last garbage collection found live:
// garbage does not count, so a call that only churns (builds and drops
// strings) is not stopped.
const heapLiveMetric = "/gc/heap/live:bytes"

type jsHeapWatch struct {
	mu      sync.Mutex
	vms     map[*jsVM]struct{}
	running bool
}

var heapWatch jsHeapWatch

func (w *jsHeapWatch) add(j *jsVM) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.vms == nil {
		w.vms = map[*jsVM]struct{}{}
	}
	w.vms[j] = struct{}{}
	if !w.running {
		w.running = true
		go w.run()
	}
}

func (w *jsHeapWatch) remove(j *jsVM) {
	w.mu.Lock()
	delete(w.vms, j)
	w.mu.Unlock()
}

// run samples while any VM exists; the last VM's removal ends it at the
// next tick.
func (w *jsHeapWatch) run() {
	sample := []metrics.Sample{{Name: heapLiveMetric}}
	tick := time.NewTicker(heapWatchTick)
	defer tick.Stop()
	var vms []*jsVM
	for range tick.C {
		w.mu.Lock()
		if len(w.vms) == 0 {
			w.running = false
			w.mu.Unlock()
			return
		}
		vms = vms[:0]
		for j := range w.vms {
			vms = append(vms, j)
		}
		w.mu.Unlock()
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			continue
		}
		live := sample[0].Value.Uint64()
		for _, j := range vms {
			j.checkHeap(live)
		}
	}
}

// checkHeap interrupts the VM's call if the live heap grew by more than
// the limit since the watcher first saw that call.
func (j *jsVM) checkHeap(live uint64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case !j.inCall || j.interrupted != nil:
	case j.heapSeq != j.seq:
		j.heapSeq, j.heapBase = j.seq, live
	case live > j.heapBase && live-j.heapBase > j.limit:
		j.interrupted = errJSMemory
		j.vm.Interrupt(errJSMemory)
	}
}
