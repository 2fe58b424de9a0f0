package planner

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
)

// magicTimestamps rewrites a WHERE clause the way ksqlDB does for its
// pseudo time columns: where ROWTIME, WINDOWSTART or WINDOWEND is
// compared with (or tested BETWEEN) string literals, each string is read
// as a timestamp, possibly partial ('2018', '2018-01-01T10') and with an
// optional zone offset (UTC otherwise), and replaced by its epoch
// milliseconds.
func magicTimestamps(where parser.Expr) (parser.Expr, error) {
	var bad error
	conv := func(e parser.Expr) parser.Expr {
		lit, ok := e.(*parser.Literal)
		if !ok || lit.Kind != parser.LitString {
			return e
		}
		ms, err := partialTimestamp(lit.Str)
		if err != nil {
			if bad == nil {
				bad = posErr(lit.Pos, fmt.Errorf("%w: %v", ErrInvalid, err))
			}
			return e
		}
		return &parser.Literal{Pos: lit.Pos, Kind: parser.LitInteger, Text: strconv.FormatInt(ms, 10)}
	}
	out := parser.Rewrite(where, func(x parser.Expr) parser.Expr {
		switch x := x.(type) {
		case *parser.Binary:
			if x.Op < parser.OpEq || x.Op > parser.OpGe {
				return nil
			}
			c := *x
			switch {
			case isPseudoTime(x.Left):
				c.Right = conv(x.Right)
			case isPseudoTime(x.Right):
				c.Left = conv(x.Left)
			default:
				return nil
			}
			return &c
		case *parser.Between:
			if !isPseudoTime(x.X) {
				return nil
			}
			c := *x
			c.Lo, c.Hi = conv(x.Lo), conv(x.Hi)
			return &c
		}
		return nil
	})
	return out, bad
}

func isPseudoTime(e parser.Expr) bool {
	ref, ok := e.(*parser.ColumnRef)
	if !ok {
		return false
	}
	switch strings.ToUpper(ref.Name) {
	case "ROWTIME", "WINDOWSTART", "WINDOWEND":
		return true
	}
	return false
}

// partialTimestamp reads yyyy[-MM[-dd[THH[:mm[:ss[.SSS]]]]]] with an
// optional Z or ±HH[[:]mm] zone, the missing fields taken from
// 1970-01-01T00:00:00.000.
func partialTimestamp(s string) (int64, error) {
	date, clock, zone := s, "", ""
	if i := strings.IndexByte(s, 'T'); i >= 0 {
		date, clock = s[:i], s[i+1:]
		if j := strings.IndexAny(clock, "+-Z"); j >= 0 {
			clock, zone = clock[:j], clock[j:]
		}
	}
	full := completeParts(date, "-", []string{"1970", "01", "01"}) + "T" + completeClock(clock)
	// Read as ksqlDB reads it, with java.time's rules: 24:00 is the next
	// day's midnight, a day past the month's end its last day.
	ms, err := expr.ParseJavaTime(full, "yyyy-MM-dd'T'HH:mm:ss.SSS", time.UTC)
	if err != nil {
		return 0, fmt.Errorf("cannot read %q as a timestamp (yyyy-MM-dd'T'HH:mm:ss.SSS): %w", s, err)
	}
	off, err := zoneOffset(zone)
	if err != nil {
		return 0, fmt.Errorf("cannot read %q as a timestamp: %w", s, err)
	}
	return ms - int64(off)*1000, nil
}

// completeParts fills the fields of a sep-separated value missing at its
// end from defaults.
func completeParts(s, sep string, defaults []string) string {
	parts := []string{}
	if s != "" {
		parts = strings.Split(s, sep)
	}
	for len(parts) < len(defaults) {
		parts = append(parts, defaults[len(parts)])
	}
	return strings.Join(parts, sep)
}

func completeClock(s string) string {
	hms, frac := s, "000"
	if i := strings.IndexByte(s, '.'); i >= 0 {
		hms, frac = s[:i], (s[i+1:] + "000")[:3]
	}
	return completeParts(hms, ":", []string{"00", "00", "00"}) + "." + frac
}

// zoneOffset reads Z, ±HH, ±HHmm or ±HH:mm as seconds east of UTC.
func zoneOffset(z string) (int, error) {
	if z == "" || z == "Z" {
		return 0, nil
	}
	sign := 1
	if z[0] == '-' {
		sign = -1
	}
	digits := strings.ReplaceAll(z[1:], ":", "")
	if len(digits) != 2 && len(digits) != 4 {
		return 0, fmt.Errorf("bad zone offset %q", z)
	}
	h, err := strconv.Atoi(digits[:2])
	if err != nil {
		return 0, fmt.Errorf("bad zone offset %q", z)
	}
	m := 0
	if len(digits) == 4 {
		if m, err = strconv.Atoi(digits[2:]); err != nil {
			return 0, fmt.Errorf("bad zone offset %q", z)
		}
	}
	return sign * (h*3600 + m*60), nil
}
