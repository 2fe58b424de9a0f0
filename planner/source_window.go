package planner

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sluice-sql/sluice/exec"
)

// sourceWindow reads WINDOW_TYPE and WINDOW_SIZE of CREATE STREAM|TABLE:
// they declare that the topic's keys are windowed keys, as written by a
// windowed aggregation (ours, ksqlDB's or Kafka Streams'). A TUMBLING or
// HOPPING key carries only the window start, so the size is needed to
// give rows their WINDOWEND; a SESSION key carries both bounds, so a
// size would be meaningless and is refused. The messages are ksqlDB's.
func sourceWindow(p Props) (exec.WindowType, int64, error) {
	typ, hasType := p["WINDOW_TYPE"]
	sizeText, hasSize := p["WINDOW_SIZE"]
	if !hasType {
		if hasSize {
			return 0, 0, fmt.Errorf("%w: 'WINDOW_SIZE' should not be set when 'WINDOW_TYPE' is not set", ErrInvalid)
		}
		return exec.NotWindowed, 0, nil
	}
	switch strings.ToUpper(strings.TrimSpace(typ)) {
	case "SESSION":
		if hasSize {
			return 0, 0, fmt.Errorf("%w: 'WINDOW_SIZE' should not be set for SESSION windows.", ErrInvalid)
		}
		return exec.SessionWindowed, 0, nil
	case "TUMBLING", "HOPPING":
		if !hasSize {
			return 0, 0, fmt.Errorf("%w: 'WINDOW_SIZE' is required for TUMBLING and HOPPING windows.", ErrInvalid)
		}
		ms, err := spelledDuration(sizeText)
		if err != nil {
			return 0, 0, fmt.Errorf("%w: Configuration WINDOW_SIZE is invalid: %v", ErrInvalid, err)
		}
		return exec.TimeWindowed, ms, nil
	}
	return 0, 0, fmt.Errorf("%w: Configuration WINDOW_TYPE is invalid: '%s'. Valid values are SESSION, HOPPING and TUMBLING", ErrInvalid, typ)
}

// spelledDuration reads '<number> <unit>' ('30 SECONDS', '1 hour'), the
// only form ksqlDB accepts for WINDOW_SIZE, in milliseconds.
func spelledDuration(text string) (int64, error) {
	invalid := func(why string) error { return fmt.Errorf("Invalid duration: '%s'. %s", text, why) }
	parts := strings.Fields(text)
	if len(parts) != 2 {
		return 0, invalid(fmt.Sprintf("Expected 2 tokens, got: %d", len(parts)))
	}
	n, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil || n <= 0 {
		return 0, invalid(fmt.Sprintf("Not a positive whole number: '%s'", parts[0]))
	}
	unit := strings.ToUpper(parts[1])
	mult, ok := durationUnits[strings.TrimSuffix(unit, "S")]
	if !ok || len(unit) <= 2 { // the compact units (ms, s, …) are not ksqlDB's here
		return 0, invalid(fmt.Sprintf("Unknown time unit: '%s'", unit))
	}
	ms := mult.Milliseconds()
	if n > (1<<63-1)/ms {
		return 0, invalid("Too large")
	}
	return n * ms, nil
}
