package planner

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// durationUnits are the units a duration property may use, compact
// ('24h') and spelled as in ksqlDB's WINDOW clause ('24 HOURS').
var durationUnits = map[string]time.Duration{
	"MS": time.Millisecond, "S": time.Second, "M": time.Minute, "H": time.Hour, "D": 24 * time.Hour,
	"MILLISECOND": time.Millisecond, "SECOND": time.Second, "MINUTE": time.Minute, "HOUR": time.Hour, "DAY": 24 * time.Hour,
}

// ParseDuration is parseDuration for properties the engine reads.
func ParseDuration(name, text string) (time.Duration, error) { return parseDuration(name, text) }

// parseDuration reads the value of a duration property named name: a
// compact duration ('500ms', '10s', '30m', '24h', '7d', or a sum such as
// '1h30m') or a spelled one ('24 HOURS', '1 DAY', '500 MILLISECONDS').
// The duration must be positive.
func parseDuration(name, text string) (time.Duration, error) {
	bad := func(why string) error {
		return fmt.Errorf("%w: %s must be a duration such as '24h', '30m', '7d' or '24 HOURS'; %q %s", ErrInvalid, name, text, why)
	}
	s := strings.ToUpper(strings.TrimSpace(text))
	if s == "" {
		return 0, bad("is empty")
	}
	if num, unit, spelled := strings.Cut(s, " "); spelled {
		unit = strings.TrimSpace(unit)
		mult, ok := durationUnits[strings.TrimSuffix(unit, "S")]
		if !ok || len(unit) <= 2 {
			return 0, bad("has an unknown unit " + unit)
		}
		return scale(num, mult, bad)
	}
	var total time.Duration
	for s != "" {
		i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
		if i == 0 {
			return 0, bad("needs a number before its unit")
		}
		if i < 0 {
			return 0, bad("needs a unit (ms, s, m, h or d)")
		}
		j := strings.IndexFunc(s[i:], func(r rune) bool { return r < 'A' || r > 'Z' })
		if j < 0 {
			j = len(s) - i
		}
		if j == 0 {
			return 0, bad("needs whole numbers, each followed by a unit (ms, s, m, h or d)")
		}
		mult, ok := durationUnits[s[i:i+j]]
		if !ok || j > 2 {
			return 0, bad("has an unknown unit " + strings.ToLower(s[i:i+j]))
		}
		d, err := scale(s[:i], mult, bad)
		if err != nil {
			return 0, err
		}
		if total > math.MaxInt64-d {
			return 0, bad("is too large")
		}
		total += d
		s = s[i+j:]
	}
	if total <= 0 {
		return 0, bad("is not positive")
	}
	return total, nil
}

func scale(num string, mult time.Duration, bad func(string) error) (time.Duration, error) {
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return 0, bad("needs a whole number")
	}
	if n <= 0 {
		return 0, bad("is not positive")
	}
	if n > math.MaxInt64/int64(mult) {
		return 0, bad("is too large")
	}
	return time.Duration(n) * mult, nil
}
