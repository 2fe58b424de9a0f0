package main

import (
	"fmt"
	"os"
	"sync"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/sluice-sql/sluice/exec"
)

// restoreBars draws a progress bar per restoring store partition, on a
// terminal only: scripts and logs get the "state restored" log line.
type restoreBars struct {
	mu   sync.Mutex
	bars map[string]*progressbar.ProgressBar
}

// restoreProgress returns the engine hook, or nil when stderr is not a
// terminal.
func restoreProgress() func(exec.RestoreProgress) {
	if !term.IsTerminal(int(os.Stderr.Fd())) {
		return nil
	}
	rb := &restoreBars{bars: map[string]*progressbar.ProgressBar{}}
	return rb.update
}

func (rb *restoreBars) update(p exec.RestoreProgress) {
	if p.Total <= 0 {
		return
	}
	key := fmt.Sprintf("%s/%d", p.Store, p.Partition)
	rb.mu.Lock()
	defer rb.mu.Unlock()
	bar, ok := rb.bars[key]
	if !ok {
		bar = progressbar.NewOptions64(p.Total,
			progressbar.OptionSetWriter(os.Stderr),
			progressbar.OptionSetDescription("restoring "+key),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("records"),
			progressbar.OptionThrottle(100_000_000),
			progressbar.OptionClearOnFinish(),
		)
		rb.bars[key] = bar
	}
	_ = bar.Set64(p.Done)
	if p.Done >= p.Total {
		_ = bar.Finish()
		delete(rb.bars, key)
	}
}
