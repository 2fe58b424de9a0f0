package planner

import "time"

// IdleTimeoutProperty names the session property behind
// Options.IdleTimeout.
const IdleTimeoutProperty = "sluice.idle.timeout"

// idleTimeout is how long a query's partition may go without records
// before its stream time follows the wall clock (exec.Topology's
// IdleTimeout): WITH (IDLE_TIMEOUT=…) of a CREATE … AS SELECT, else the
// session's sluice.idle.timeout; 0 when neither is set.
func idleTimeout(target *Target, opts Options) (time.Duration, error) {
	if target != nil {
		if text, ok := target.With["IDLE_TIMEOUT"]; ok {
			return parseDuration("IDLE_TIMEOUT", text)
		}
	}
	if opts.IdleTimeout == "" {
		return 0, nil
	}
	return parseDuration("'"+IdleTimeoutProperty+"'", opts.IdleTimeout)
}
