package engine

import (
	"fmt"
	"strings"
)

// Owner is one instance of the service and what it holds of a query:
// the partitions it owns (with their task states) and those it keeps
// standby state for. A server fills these from its instance registry
// (Config.Owners) so that DESCRIBE … EXTENDED and SHOW QUERIES EXTENDED
// show the whole service, not just this instance.
type Owner struct {
	Instance string
	URL      string
	Self     bool
	Alive    bool
	// Partitions and Standbys read "topic/partition STATE".
	Partitions []string
	Standbys   []string
}

// writeOwners prints the instances holding query id, one line each;
// nothing without Config.Owners (a single embedded engine).
func (e *Engine) writeOwners(b *strings.Builder, id string) {
	if e.cfg.Owners == nil {
		return
	}
	owners := e.cfg.Owners(id)
	fmt.Fprintf(b, "\nInstances of the service running %s:\n", id)
	if len(owners) == 0 {
		b.WriteString(" (none heard from yet)\n")
	}
	for _, o := range owners {
		tags := ""
		if o.Self {
			tags += " (this one)"
		}
		if !o.Alive {
			tags += " (not heard from: owns nothing)"
		}
		fmt.Fprintf(b, " %s %s%s: owns [%s]", o.Instance, o.URL, tags, strings.Join(o.Partitions, ", "))
		if len(o.Standbys) > 0 {
			fmt.Fprintf(b, ", standby for [%s]", strings.Join(o.Standbys, ", "))
		}
		b.WriteString("\n")
	}
}
