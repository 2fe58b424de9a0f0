package expr

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	_ "time/tzdata" // time zones work on machines without zoneinfo
	"unicode"
)

// JavaPattern is a compiled java.time.format.DateTimeFormatter pattern,
// the dialect ksqlDB's date and time functions and TIMESTAMP_FORMAT use:
// yyyy yy y uuuu, M MM MMM MMMM (L too), d dd, D, H HH, k, h hh, K, m mm,
// s ss, S… (fraction), a, E EEE EEEE, X XX XXX, x xx xxx, Z ZZZZZ, z,
// VV, 'quoted literal' (” is a quote) and any non-letter as itself.
type JavaPattern struct {
	src  string
	toks []tmTok
}

type tmTok struct {
	letter byte // 0 for a literal
	count  int
	lit    string
}

// tmPatternCache holds compiled patterns (or their errors), at most
// tmPatternCacheMax of them, as patterns may come from data.
var (
	tmPatternCache    sync.Map // string → *JavaPattern or error
	tmPatternCached   atomic.Int64
	tmPatternCacheMax int64 = 1000
)

func tmCachePattern(pattern string, v any) {
	if tmPatternCached.Load() < tmPatternCacheMax {
		if _, loaded := tmPatternCache.LoadOrStore(pattern, v); !loaded {
			tmPatternCached.Add(1)
		}
	}
}

// CompileJavaPattern compiles a DateTimeFormatter pattern; an unknown
// pattern letter or an unclosed quote is an error, as in Java.
func CompileJavaPattern(pattern string) (*JavaPattern, error) {
	if v, ok := tmPatternCache.Load(pattern); ok {
		if err, isErr := v.(error); isErr {
			return nil, err
		}
		return v.(*JavaPattern), nil
	}
	p, err := tmCompilePattern(pattern)
	if err != nil {
		tmCachePattern(pattern, err)
		return nil, err
	}
	tmCachePattern(pattern, p)
	return p, nil
}

const tmLetters = "yuYGMLdDHkhKmsSaEXxZzV"

func tmCompilePattern(pattern string) (*JavaPattern, error) {
	p := &JavaPattern{src: pattern}
	bad := func(format string, a ...any) (*JavaPattern, error) {
		return nil, fmt.Errorf("%w: invalid date/time pattern %q: %s", ErrType, pattern, fmt.Sprintf(format, a...))
	}
	for i := 0; i < len(pattern); {
		c := pattern[i]
		switch {
		case c == '\'':
			var lit strings.Builder
			j := i + 1
			closed := false
			for j < len(pattern) {
				if pattern[j] == '\'' {
					if j+1 < len(pattern) && pattern[j+1] == '\'' {
						lit.WriteByte('\'')
						j += 2
						continue
					}
					closed = true
					j++
					break
				}
				lit.WriteByte(pattern[j])
				j++
			}
			if !closed {
				return bad("unclosed quote")
			}
			if j == i+2 { // '' is a quote
				lit.WriteByte('\'')
			}
			p.toks = append(p.toks, tmTok{lit: lit.String()})
			i = j
		case c < 128 && unicode.IsLetter(rune(c)):
			if !strings.ContainsRune(tmLetters, rune(c)) {
				return bad("unknown pattern letter '%c'", c)
			}
			j := i
			for j < len(pattern) && pattern[j] == c {
				j++
			}
			n := j - i
			if max := tmMaxCount(c); n > max {
				return bad("too many pattern letters '%c'", c)
			}
			if c == 'V' && n != 2 {
				return bad("pattern letter 'V' must be VV")
			}
			p.toks = append(p.toks, tmTok{letter: c, count: n})
			i = j
		case c == '[' || c == ']' || c == '#' || c == '{' || c == '}':
			return bad("'%c' is reserved", c)
		default:
			j := i
			for j < len(pattern) && pattern[j] != '\'' && !(pattern[j] < 128 && unicode.IsLetter(rune(pattern[j]))) && !strings.ContainsRune("[]#{}", rune(pattern[j])) {
				j++
			}
			if j == i { // a non-ASCII letter: Java takes it literally
				j = i + 1
			}
			p.toks = append(p.toks, tmTok{lit: pattern[i:j]})
			i = j
		}
	}
	return p, nil
}

func tmMaxCount(c byte) int {
	switch c {
	case 'y', 'u', 'Y', 'S':
		return 9
	case 'G':
		return 5
	case 'M', 'L', 'E', 'z':
		return 4
	case 'D':
		return 3
	case 'X', 'x', 'Z':
		return 5
	case 'a':
		return 1
	}
	return 2
}

// Format renders t (in its own location) with the pattern.
func (p *JavaPattern) Format(t time.Time) string {
	var b []byte
	for _, tk := range p.toks {
		if tk.letter == 0 {
			b = append(b, tk.lit...)
			continue
		}
		n := tk.count
		switch tk.letter {
		case 'y', 'u':
			y := t.Year()
			if n == 2 {
				b = tmPad(b, ((y%100)+100)%100, 2)
			} else {
				b = tmPad(b, y, n)
			}
		case 'Y':
			// Week-based year, with the US week (Sunday first, week 1
			// holds January 1) java.time's default locale gives.
			y := t.Year()
			if t.Month() == 12 && 31-t.Day() < 6-int(t.Weekday()) {
				y++
			}
			if n == 2 {
				b = tmPad(b, y%100, 2)
			} else {
				b = tmPad(b, y, n)
			}
		case 'G':
			if n == 4 {
				b = append(b, "Anno Domini"...)
			} else {
				b = append(b, "AD"...)
			}
		case 'M', 'L':
			switch n {
			case 3:
				b = append(b, t.Month().String()[:3]...)
			case 4:
				b = append(b, t.Month().String()...)
			default:
				b = tmPad(b, int(t.Month()), n)
			}
		case 'd':
			b = tmPad(b, t.Day(), n)
		case 'D':
			b = tmPad(b, t.YearDay(), n)
		case 'H':
			b = tmPad(b, t.Hour(), n)
		case 'k':
			h := t.Hour()
			if h == 0 {
				h = 24
			}
			b = tmPad(b, h, n)
		case 'h':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			b = tmPad(b, h, n)
		case 'K':
			b = tmPad(b, t.Hour()%12, n)
		case 'm':
			b = tmPad(b, t.Minute(), n)
		case 's':
			b = tmPad(b, t.Second(), n)
		case 'S':
			frac := fmt.Sprintf("%09d", t.Nanosecond())
			b = append(b, frac[:n]...)
		case 'a':
			if t.Hour() < 12 {
				b = append(b, "AM"...)
			} else {
				b = append(b, "PM"...)
			}
		case 'E':
			if n == 4 {
				b = append(b, t.Weekday().String()...)
			} else {
				b = append(b, t.Weekday().String()[:3]...)
			}
		case 'X', 'x', 'Z':
			_, off := t.Zone()
			b = tmAppendOffset(b, tk.letter, n, off)
		case 'z':
			name, _ := t.Zone()
			b = append(b, name...)
		case 'V':
			b = append(b, t.Location().String()...)
		}
	}
	return string(b)
}

func tmPad(b []byte, v, width int) []byte {
	if v < 0 {
		b = append(b, '-')
		v = -v
	}
	s := strconv.Itoa(v)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// tmAppendOffset writes a zone offset as Java's X, x and Z letters do.
func tmAppendOffset(b []byte, letter byte, n, off int) []byte {
	if off == 0 && (letter == 'X' || (letter == 'Z' && n == 5)) {
		return append(b, 'Z')
	}
	if letter == 'Z' && n == 4 {
		if off == 0 {
			return append(b, "GMT"...)
		}
		b = append(b, "GMT"...)
		n = 3 // then +HH:MM
		letter = 'x'
	}
	sign := byte('+')
	if off < 0 {
		sign = '-'
		off = -off
	}
	h, m, s := off/3600, off/60%60, off%60
	b = append(b, sign)
	b = tmPad(b, h, 2)
	colon := (letter != 'Z' && (n == 3 || n == 5)) || (letter == 'Z' && n == 5)
	switch {
	case letter == 'Z' && n <= 3:
		b = tmPad(b, m, 2)
	case n == 1:
		if m != 0 {
			b = tmPad(b, m, 2)
		}
	default:
		if colon {
			b = append(b, ':')
		}
		b = tmPad(b, m, 2)
		if s != 0 && (n >= 4 || letter == 'Z') {
			if colon {
				b = append(b, ':')
			}
			b = tmPad(b, s, 2)
		}
	}
	return b
}

// tmNumeric reports whether a token parses as digits.
func tmNumeric(tk tmTok) bool {
	switch tk.letter {
	case 'y', 'u', 'Y', 'd', 'D', 'H', 'k', 'h', 'K', 'm', 's', 'S':
		return true
	case 'M', 'L':
		return tk.count <= 2
	}
	return false
}

var tmMonths = []string{"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"}
var tmDays = []string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"}

// Parse reads s with the pattern. Fields the pattern lacks default as
// ksqlDB's parsers default them (1970-01-01T00:00:00); without a zone in
// the text the local time is in loc. Day-of-month past the month's end
// resolves to its last day (Java's SMART resolver).
func (p *JavaPattern) Parse(s string, loc *time.Location) (time.Time, error) {
	return p.parse(s, loc, true)
}

// ParseLeading is Parse reading the pattern from the start of s and
// leaving whatever text follows it, as java.text's parsers do
// (SimpleDateFormat, and the FastDateFormat ksqlDB's PARSE_DATE uses):
// "2003-12-24-01-01" read with yyyy-MM-dd is 2003-12-24.
func (p *JavaPattern) ParseLeading(s string, loc *time.Location) (time.Time, error) {
	return p.parse(s, loc, false)
}

func (p *JavaPattern) parse(s string, loc *time.Location, whole bool) (time.Time, error) {
	fail := func(why string) (time.Time, error) {
		return time.Time{}, fmt.Errorf("text %q could not be parsed with pattern %q: %s", s, p.src, why)
	}
	year, month, day, doy := 1970, 1, 1, 0
	hour, minute, sec, nanos := 0, 0, 0, 0
	h12, pm := -1, -1
	var zone *time.Location
	pos := 0
	for ti, tk := range p.toks {
		rest := s[pos:]
		if tk.letter == 0 {
			if !strings.HasPrefix(rest, tk.lit) {
				return fail(fmt.Sprintf("expected %q at index %d", tk.lit, pos))
			}
			pos += len(tk.lit)
			continue
		}
		if tmNumeric(tk) {
			minW, maxW := tk.count, 9
			if tk.letter == 'y' || tk.letter == 'u' || tk.letter == 'Y' {
				if tk.count == 2 {
					maxW = 2
				} else if tk.count == 4 {
					minW = 4
				}
			}
			if tk.letter == 'S' {
				maxW = tk.count
			}
			adjacent := ti+1 < len(p.toks) && tmNumeric(p.toks[ti+1])
			yearLike := tk.letter == 'y' || tk.letter == 'u' || tk.letter == 'Y'
			switch {
			case adjacent:
				maxW = max(minW, tk.count)
			case !whole && !yearLike && tk.letter != 'S':
				// java.text reads a number its pattern does not butt
				// against another as however many digits it has: "1"
				// fits dd.
				minW, maxW = 1, 9
			case tk.count == 2 && !yearLike:
				maxW = 2
			}
			sign := 1
			if (tk.letter == 'y' || tk.letter == 'u' || tk.letter == 'Y') && tk.count != 2 && len(rest) > 0 && (rest[0] == '-' || rest[0] == '+') {
				if rest[0] == '-' {
					sign = -1
				}
				rest = rest[1:]
				pos++
			}
			j := 0
			for j < len(rest) && j < maxW && rest[j] >= '0' && rest[j] <= '9' {
				j++
			}
			if j < minW || j == 0 {
				return fail(fmt.Sprintf("expected a number at index %d", pos))
			}
			v, _ := strconv.Atoi(rest[:j])
			v *= sign
			pos += j
			switch tk.letter {
			case 'y', 'u', 'Y': // a week-based year reads as the year
				if tk.count == 2 {
					v += 2000
				}
				year = v
			case 'M', 'L':
				month = v
			case 'd':
				day = v
			case 'D':
				doy = v
			case 'H':
				hour = v
			case 'k':
				hour = v % 24
			case 'h':
				h12 = v
			case 'K':
				h12 = v
			case 'm':
				minute = v
			case 's':
				sec = v
			case 'S':
				for k := j; k < 9; k++ {
					v *= 10
				}
				nanos = v
			}
			continue
		}
		switch tk.letter {
		case 'M', 'L', 'E':
			names := tmMonths
			if tk.letter == 'E' {
				names = tmDays
			}
			found := false
			for i, name := range names {
				cand := name
				if tk.count == 3 || (tk.letter == 'E' && tk.count < 4) {
					cand = name[:3]
				}
				if len(rest) >= len(cand) && strings.EqualFold(rest[:len(cand)], cand) {
					if tk.letter != 'E' {
						month = i + 1
					}
					pos += len(cand)
					found = true
					break
				}
			}
			if !found {
				return fail(fmt.Sprintf("expected a name at index %d", pos))
			}
		case 'G':
			switch {
			case strings.HasPrefix(rest, "Anno Domini"):
				pos += len("Anno Domini")
			case strings.HasPrefix(rest, "AD"):
				pos += 2
			default:
				return fail(fmt.Sprintf("expected an era at index %d", pos))
			}
		case 'a':
			switch {
			case len(rest) >= 2 && strings.EqualFold(rest[:2], "AM"):
				pm = 0
			case len(rest) >= 2 && strings.EqualFold(rest[:2], "PM"):
				pm = 1
			default:
				return fail(fmt.Sprintf("expected AM or PM at index %d", pos))
			}
			pos += 2
		case 'X', 'x', 'Z':
			off, n, ok := tmParseOffset(rest)
			if !ok {
				return fail(fmt.Sprintf("expected a zone offset at index %d", pos))
			}
			pos += n
			zone = time.FixedZone("", off)
		case 'z', 'V':
			j := 0
			for j < len(rest) && (rest[j] == '/' || rest[j] == '_' || rest[j] == '+' || rest[j] == '-' || rest[j] == ':' ||
				(rest[j] >= '0' && rest[j] <= '9') || unicode.IsLetter(rune(rest[j]))) {
				j++
			}
			name := rest[:j]
			if region, ok := tmZoneNames[name]; ok && tk.letter == 'z' {
				name = region
			}
			l, err := LoadZone(name)
			if err != nil {
				return fail(fmt.Sprintf("unknown time zone %q", rest[:j]))
			}
			pos += j
			zone = l
		}
	}
	if whole && pos != len(s) {
		return fail(fmt.Sprintf("unparsed text found at index %d", pos))
	}
	if h12 >= 0 {
		if h12 > 12 || (h12 == 0 && p.hasLetter('h')) {
			return fail("invalid clock-hour-of-am-pm")
		}
		hour = h12 % 12
		if pm == 1 {
			hour += 12
		}
	}
	// java.time's SMART resolver reads 24:00 (and no later) as the end
	// of the day: the next day's midnight. java.text's parser does not.
	endOfDay := whole && hour == 24 && minute == 0 && sec == 0 && nanos == 0 && h12 < 0
	if month < 1 || month > 12 || day < 1 || day > 31 || (hour > 23 && !endOfDay) || minute > 59 || sec > 59 {
		return fail("field value out of range")
	}
	if doy > 0 {
		if doy > 365 && tmDaysIn(year, 2) == 28 {
			return fail("day-of-year 366 in a year that is not a leap year")
		}
		month, day = 1, doy
	} else if last := tmDaysIn(year, month); day > last {
		day = last
	}
	if zone == nil {
		zone = loc
	}
	if endOfDay {
		next := time.Date(year, time.Month(month), day+1, 0, 0, 0, 0, time.UTC)
		return tmLocalToInstant(next.Year(), next.Month(), next.Day(), 0, 0, 0, 0, zone), nil
	}
	return tmLocalToInstant(year, time.Month(month), day, hour, minute, sec, nanos, zone), nil
}

// tmZoneNames maps the zone abbreviations java.time's 'z' reads (and
// Go's tzdata prints) to a region.
var tmZoneNames = map[string]string{
	"PST": "America/Los_Angeles", "PDT": "America/Los_Angeles",
	"MST": "America/Denver", "MDT": "America/Denver",
	"CST": "America/Chicago", "CDT": "America/Chicago",
	"EST": "America/New_York", "EDT": "America/New_York",
	"AKST": "America/Anchorage", "AKDT": "America/Anchorage",
	"HST": "Pacific/Honolulu", "BST": "Europe/London",
	"CET": "Europe/Paris", "CEST": "Europe/Paris",
	"EET": "Europe/Athens", "EEST": "Europe/Athens", "WET": "Europe/Lisbon", "WEST": "Europe/Lisbon",
	"IST": "Asia/Kolkata", "JST": "Asia/Tokyo", "KST": "Asia/Seoul",
	"AEST": "Australia/Sydney", "AEDT": "Australia/Sydney",
}

func (p *JavaPattern) hasLetter(c byte) bool {
	for _, tk := range p.toks {
		if tk.letter == c {
			return true
		}
	}
	return false
}

// hasAny reports whether the pattern uses any of the letters, so that
// FORMAT_DATE can refuse time fields as ksqlDB does, and the like.
func (p *JavaPattern) hasAny(letters string) bool {
	for _, tk := range p.toks {
		if tk.letter != 0 && strings.IndexByte(letters, tk.letter) >= 0 {
			return true
		}
	}
	return false
}

func tmDaysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// tmParseOffset reads Z, ±HH, ±HHMM, ±HH:MM (optionally GMT/UTC-prefixed).
// Letters match in either case: ksqlDB's parsers are built
// parseCaseInsensitive, so "z" is UTC too.
func tmParseOffset(s string) (off, n int, ok bool) {
	if len(s) > 0 && (s[0] == 'Z' || s[0] == 'z') {
		return 0, 1, true
	}
	for _, pre := range []string{"GMT", "UTC"} {
		if len(s) >= len(pre) && strings.EqualFold(s[:len(pre)], pre) {
			if len(s) == 3 || (s[3] != '+' && s[3] != '-') {
				return 0, 3, true
			}
			o, m, ok := tmParseOffset(s[3:])
			return o, m + 3, ok
		}
	}
	if len(s) < 3 || (s[0] != '+' && s[0] != '-') {
		return 0, 0, false
	}
	digits := func(t string) (int, bool) {
		if len(t) < 2 || t[0] < '0' || t[0] > '9' || t[1] < '0' || t[1] > '9' {
			return 0, false
		}
		return int(t[0]-'0')*10 + int(t[1]-'0'), true
	}
	h, okh := digits(s[1:])
	if !okh {
		return 0, 0, false
	}
	n = 3
	m := 0
	if len(s) >= 6 && s[3] == ':' {
		if v, ok := digits(s[4:]); ok {
			m, n = v, 6
		}
	} else if v, ok := digits(s[3:]); ok {
		m, n = v, 5
	}
	off = h*3600 + m*60
	if s[0] == '-' {
		off = -off
	}
	return off, n, true
}

// tmLocalToInstant resolves a local date-time in loc as ksqlDB's
// StringToTimestampParser does: it starts from 1970-01-01T00:00 in the
// zone and sets the parsed fields one by one, so each step keeps the
// offset it had (java.time's ZonedDateTime.with): in an overlap the offset
// the zone had on 1970-01-01 wins when it is one of the two (standard
// time, in the northern hemisphere the later instant), else the earlier
// offset; in a DST gap the time moves forward by the gap's length.
func tmLocalToInstant(y int, mo time.Month, d, h, mi, s, ns int, loc *time.Location) time.Time {
	local := time.Date(y, mo, d, h, mi, s, ns, time.UTC)
	offAt := func(t time.Time) int { _, o := t.In(loc).Zone(); return o }
	before := offAt(local.Add(-24 * time.Hour))
	after := offAt(local.Add(24 * time.Hour))
	var valid []int
	for _, o := range []int{before, after} {
		t := local.Add(-time.Duration(o) * time.Second)
		if offAt(t) == o && !slices.Contains(valid, o) {
			valid = append(valid, o)
		}
	}
	at := func(o int) time.Time { return local.Add(-time.Duration(o) * time.Second).In(loc) }
	switch len(valid) {
	case 0: // gap: shift forward by its length
		return at(before)
	case 1:
		return at(valid[0])
	}
	if preferred := offAt(time.Date(1970, 1, 1, h, mi, s, ns, time.UTC)); slices.Contains(valid, preferred) {
		return at(preferred)
	}
	return at(max(valid[0], valid[1]))
}

var tmZoneCache sync.Map

// LoadZone resolves a time zone as java.time's ZoneId.of does: a region
// (America/New_York), UTC, GMT, Z, or an offset (+05:30, UTC+2, GMT-08:00).
func LoadZone(name string) (*time.Location, error) {
	if v, ok := tmZoneCache.Load(name); ok {
		return v.(*time.Location), nil
	}
	var loc *time.Location
	switch {
	case name == "":
		return nil, fmt.Errorf("empty time zone")
	case name == "Z" || name == "UTC" || name == "GMT" || name == "UT":
		loc = time.UTC
	case name[0] == '+' || name[0] == '-' || strings.HasPrefix(name, "UTC") || strings.HasPrefix(name, "GMT") || strings.HasPrefix(name, "UT+") || strings.HasPrefix(name, "UT-"):
		rest := strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(name, "UTC"), "GMT"), "UT")
		off, ok := tmZoneOffset(rest)
		if !ok {
			return nil, fmt.Errorf("unknown time zone %q", name)
		}
		loc = time.FixedZone(name, off)
	default:
		if strings.EqualFold(name, "local") {
			return nil, fmt.Errorf("unknown time zone %q", name)
		}
		l, err := time.LoadLocation(name)
		if err != nil {
			return nil, fmt.Errorf("unknown time zone %q", name)
		}
		loc = l
	}
	tmZoneCache.Store(name, loc)
	return loc, nil
}

// tmZoneOffset reads ±H, ±HH, ±HHMM, ±HH:MM, ±HH:MM:SS.
func tmZoneOffset(s string) (int, bool) {
	if len(s) < 2 || (s[0] != '+' && s[0] != '-') {
		return 0, false
	}
	parts := strings.Split(s[1:], ":")
	if len(parts) == 1 && len(parts[0]) == 4 {
		parts = []string{parts[0][:2], parts[0][2:]}
	}
	if len(parts) > 3 || len(parts[0]) > 2 {
		return 0, false
	}
	off := 0
	mul := 3600
	for _, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 || (mul < 3600 && (len(p) != 2 || v > 59)) {
			return 0, false
		}
		off += v * mul
		mul /= 60
	}
	if off > 18*3600 {
		return 0, false
	}
	if s[0] == '-' {
		off = -off
	}
	return off, true
}

// ParseJavaTime parses s with a DateTimeFormatter pattern, in loc unless
// the text carries a zone, and returns epoch milliseconds.
func ParseJavaTime(s, pattern string, loc *time.Location) (int64, error) {
	p, err := CompileJavaPattern(pattern)
	if err != nil {
		return 0, err
	}
	t, err := p.Parse(s, loc)
	if err != nil {
		return 0, err
	}
	return t.UnixMilli(), nil
}

// FormatJavaTime formats epoch milliseconds with a DateTimeFormatter
// pattern in loc.
func FormatJavaTime(ms int64, pattern string, loc *time.Location) (string, error) {
	p, err := CompileJavaPattern(pattern)
	if err != nil {
		return "", err
	}
	return p.Format(time.UnixMilli(ms).In(loc)), nil
}
