package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// restoreReport is the summary of the restore benchmark's timed runs.
type restoreReport struct {
	r, s, w []sample
	// ratio is the median over runs of S/R within one run: adjacent runs
	// share the machine's momentary state, which a ratio of medians
	// does not.
	ratio float64
	// ratioOfMedians is median(S rate) / median(R rate), for comparison.
	ratioOfMedians float64
	warm           time.Duration
	// warmOpen is the median of W's state.Open alone.
	warmOpen time.Duration
	// durable is the median time from the start of S until Badger holds
	// the restored data and its checkpoint.
	durable time.Duration
}

func summarize(r, s, w []sample) restoreReport {
	ratios := make([]float64, len(r))
	for i := range r {
		ratios[i] = s[i].Rate() / r[i].Rate()
	}
	rate := func(x sample) float64 { return x.Rate() }
	return restoreReport{
		r: r, s: s, w: w,
		ratio:          median(ratios),
		ratioOfMedians: median(column(s, rate)) / median(column(r, rate)),
		warm:           time.Duration(median(column(w, func(x sample) float64 { return float64(x.Elapsed) }))),
	}
}

func (rep restoreReport) print(out io.Writer, brokerName string, keys, runs int) {
	fmt.Fprintf(out, "restore of a %d-key changelog, broker: %s, median of %d interleaved runs\n\n", keys, brokerName, runs)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "contender\trecords/s\t(min – max)\tseconds\tCPU s / M records\tpeak RSS MB\t")
	row := func(name string, ss []sample) {
		rates := column(ss, func(x sample) float64 { return x.Rate() })
		lo, hi := minMax(rates)
		fmt.Fprintf(tw, "%s\t%.0f\t(%.0f – %.0f)\t%.3f\t%.2f\t%.0f\t\n", name,
			median(rates), lo, hi,
			median(column(ss, func(x sample) float64 { return x.Elapsed.Seconds() })),
			median(column(ss, func(x sample) float64 { return x.CPU.Seconds() / float64(x.Records) * 1e6 })),
			median(column(ss, func(x sample) float64 { return float64(x.PeakRSS) / (1 << 20) })))
	}
	row("R raw franz-go consume", rep.r)
	row("S Store.Restore, cold", rep.s)
	fmt.Fprintf(tw, "W reopen + Restore, warm\t–\t\t%.3f\t\t%.0f\t\n",
		rep.warm.Seconds(), median(column(rep.w, func(x sample) float64 { return float64(x.PeakRSS) / (1 << 20) })))
	tw.Flush()
	fmt.Fprintf(out, "\nT9 S/R = %.2f (median of per-run ratios; ratio of medians %.2f), target ≥ 0.5: %s\n", rep.ratio, rep.ratioOfMedians, verdict(rep.ratio >= 0.5))
	fmt.Fprintf(out, "cold restore durable (S + background Badger build, until DB.Close returns) = %s, %.0f records/s\n",
		rep.durable.Round(time.Millisecond), float64(rep.s[0].Records)/rep.durable.Seconds())
	fmt.Fprintf(out, "warm restore (reopen + Restore) = %s (open %s), slowest %s, target < 1 s: %s\n", rep.warm.Round(time.Microsecond),
		rep.warmOpen.Round(time.Microsecond), time.Duration(slowest(rep.w)).Round(time.Microsecond), verdict(rep.warm < time.Second))
	fmt.Fprintf(out, "process peak RSS (VmHWM, broker included when embedded) = %.0f MB\n", float64(processPeak)/(1<<20))
	fmt.Fprintln(out, "CPU and RSS are the whole process's: with the embedded broker they include the broker serving the fetches.")
}

func slowest(ss []sample) float64 {
	_, hi := minMax(column(ss, func(x sample) float64 { return float64(x.Elapsed) }))
	return hi
}

func minMax(xs []float64) (lo, hi float64) {
	for i, x := range xs {
		if i == 0 || x < lo {
			lo = x
		}
		if i == 0 || x > hi {
			hi = x
		}
	}
	return lo, hi
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}
