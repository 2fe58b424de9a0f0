package exec

import (
	"fmt"
	"strings"
	"time"

	"github.com/sluice-sql/sluice/expr"
)

func parseISO(s string) (int64, error) { return expr.ParseTimestampText(s) }

// javaLayouts maps the DateTimeFormatter letters users write in
// TIMESTAMP_FORMAT to Go layout fragments.
var javaLayouts = []struct{ java, goLayout string }{
	{"yyyy", "2006"}, {"yy", "06"}, {"MMMM", "January"}, {"MMM", "Jan"}, {"MM", "01"},
	{"dd", "02"}, {"HH", "15"}, {"hh", "03"}, {"mm", "04"}, {"ss", "05"},
	{"SSSSSS", "000000"}, {"SSS", "000"}, {"a", "PM"}, {"XXX", "Z07:00"}, {"X", "Z07"},
	{"Z", "-0700"}, {"z", "MST"},
}

func parseJavaLayout(s, javaLayout string) (int64, error) {
	var b strings.Builder
	for i := 0; i < len(javaLayout); {
		if javaLayout[i] == '\'' {
			j := strings.IndexByte(javaLayout[i+1:], '\'')
			if j < 0 {
				return 0, fmt.Errorf("bad TIMESTAMP_FORMAT %q: unclosed quote", javaLayout)
			}
			b.WriteString(javaLayout[i+1 : i+1+j])
			i += j + 2
			continue
		}
		matched := false
		for _, m := range javaLayouts {
			if strings.HasPrefix(javaLayout[i:], m.java) {
				b.WriteString(m.goLayout)
				i += len(m.java)
				matched = true
				break
			}
		}
		if !matched {
			b.WriteByte(javaLayout[i])
			i++
		}
	}
	t, err := time.ParseInLocation(b.String(), s, time.UTC)
	if err != nil {
		return 0, fmt.Errorf("timestamp %q does not match format %q", s, javaLayout)
	}
	return t.UnixMilli(), nil
}
