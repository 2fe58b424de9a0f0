package main

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// sample is one timed run of one contender.
type sample struct {
	Records int64
	Elapsed time.Duration
	// CPU is the process's user+system time over the run. With the
	// embedded broker it includes the broker's work serving the run.
	CPU time.Duration
	// PeakRSS is the process's VmHWM over the run (reset before it), in
	// bytes; 0 when the kernel does not let us reset or read it.
	PeakRSS int64
}

func (s sample) Rate() float64 { return float64(s.Records) / s.Elapsed.Seconds() }

// processPeak is the highest VmHWM seen before any reset, so the whole run's
// peak survives the per-run resets.
var processPeak int64

// measure runs fn after a GC, timing it and recording the CPU and peak RSS
// it cost. fn returns how many records it handled.
func measure(fn func() (int64, error)) (sample, error) {
	runtime.GC()
	debug.FreeOSMemory()
	notePeak()
	resetPeak()
	cpu0 := cpuTime()
	t0 := time.Now()
	n, err := fn()
	el := time.Since(t0)
	s := sample{Records: n, Elapsed: el, CPU: cpuTime() - cpu0, PeakRSS: statusBytes("VmHWM")}
	notePeak()
	return s, err
}

func notePeak() { processPeak = max(processPeak, statusBytes("VmHWM")) }

// resetPeak resets VmHWM to the current RSS (Linux ≥ 4.0, own process).
func resetPeak() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// statusBytes reads a "kB" field of /proc/self/status, in bytes.
func statusBytes(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// column extracts one figure from each sample.
func column(ss []sample, f func(sample) float64) []float64 {
	out := make([]float64, len(ss))
	for i, s := range ss {
		out[i] = f(s)
	}
	return out
}
