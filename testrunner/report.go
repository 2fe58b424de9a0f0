package testrunner

import (
	"fmt"
	"io"
)

// Status is the outcome of one case.
type Status int

// The outcomes.
const (
	Passed Status = iota
	Failed
	Skipped
)

func (s Status) String() string {
	switch s {
	case Passed:
		return "PASS"
	case Failed:
		return "FAIL"
	case Skipped:
		return "SKIP"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Result is the outcome of running one case of one file.
type Result struct {
	File   string
	Case   string
	Status Status
	// Reason says why a case was skipped, or why it failed when the
	// failure is not an output difference (for example an unexpected
	// statement error).
	Reason string
	// Diff holds CompareOutputs' lines for a failed case.
	Diff []string
}

// WriteReport prints one line per case, the reasons and differences of
// failures indented beneath, and a closing line
// "N passed, N failed, N skipped". It returns the number of failures.
func WriteReport(w io.Writer, results []Result) (failed int) {
	var passed, skipped int
	for _, r := range results {
		switch r.Status {
		case Passed:
			passed++
			fmt.Fprintf(w, "PASS  %s :: %s\n", r.File, r.Case)
		case Skipped:
			skipped++
			fmt.Fprintf(w, "SKIP  %s :: %s (%s)\n", r.File, r.Case, r.Reason)
		default:
			failed++
			fmt.Fprintf(w, "FAIL  %s :: %s\n", r.File, r.Case)
			if r.Reason != "" {
				fmt.Fprintf(w, "    %s\n", r.Reason)
			}
			for _, d := range r.Diff {
				fmt.Fprintf(w, "    %s\n", d)
			}
		}
	}
	fmt.Fprintf(w, "%d passed, %d failed, %d skipped\n", passed, failed, skipped)
	return failed
}
