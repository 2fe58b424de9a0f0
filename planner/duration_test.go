package planner

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	good := map[string]time.Duration{
		"24h": 24 * time.Hour, "30m": 30 * time.Minute, "10s": 10 * time.Second, "500ms": 500 * time.Millisecond,
		"7d": 7 * 24 * time.Hour, "1h30m": 90 * time.Minute, " 2H ": 2 * time.Hour,
		"24 HOURS": 24 * time.Hour, "1 day": 24 * time.Hour, "500 MILLISECONDS": 500 * time.Millisecond,
		"1 MINUTE": time.Minute, "3 seconds": 3 * time.Second,
	}
	for in, want := range good {
		got, err := parseDuration("RETENTION", in)
		if err != nil || got != want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	bad := map[string]string{
		"":                      `RETENTION must be a duration such as '24h', '30m', '7d' or '24 HOURS'; "" is empty`,
		"24":                    `"24" needs a unit (ms, s, m, h or d)`,
		"h":                     `"h" needs a number before its unit`,
		"1w":                    `"1w" has an unknown unit w`,
		"10 FORTNIGHTS":         `"10 FORTNIGHTS" has an unknown unit FORTNIGHTS`,
		"0s":                    `"0s" is not positive`,
		"-1h":                   `"-1h" needs a number before its unit`,
		"1.5h":                  `"1.5h" needs whole numbers, each followed by a unit`,
		"99999999999999999999d": `needs a whole number`,
		"9999999999d":           `"9999999999d" is too large`,
	}
	for in, want := range bad {
		_, err := parseDuration("RETENTION", in)
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("parseDuration(%q) = %v; want an ErrInvalid containing %q", in, err, want)
		}
	}
}
