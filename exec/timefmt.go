package exec

import (
	"fmt"
	"time"

	"github.com/sluice-sql/sluice/expr"
)

func parseISO(s string) (int64, error) { return expr.ParseTimestampText(s) }

// parseJavaLayout reads a TIMESTAMP_FORMAT value with the
// DateTimeFormatter pattern the source declares (expr.ParseJavaTime, the
// implementation ksqlDB's date functions share), in UTC unless the text
// carries a zone.
func parseJavaLayout(s, javaLayout string) (int64, error) {
	ms, err := expr.ParseJavaTime(s, javaLayout, time.UTC)
	if err != nil {
		return 0, fmt.Errorf("timestamp %q does not match format %q: %v", s, javaLayout, err)
	}
	return ms, nil
}
