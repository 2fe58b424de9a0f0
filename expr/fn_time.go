package expr

import (
	"fmt"
	"strings"
	"time"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// ksqlDB's date and time functions. TIMESTAMP is int64 epoch
// milliseconds, DATE int32 days since the epoch, TIME int32 milliseconds
// since midnight. Patterns are java.time DateTimeFormatter patterns
// (JavaPattern); time zones are java.time ZoneIds (LoadZone). A NULL
// argument gives NULL; a value ksqlDB's UDF would throw on (text that
// does not match, an unknown zone in a column) gives NULL, as ksqlDB's
// expression evaluation does after logging the error. Literal patterns,
// zones and units are checked when the expression compiles.

const tmDayMillis = 86_400_000

// tmUnitMillis are the units TIMESTAMPADD, DATEADD, TIMEADD and their SUB
// forms take, as ksqlDB's grammar spells them.
var tmUnitMillis = map[string]int64{
	"MILLISECOND": 1, "MILLISECONDS": 1,
	"SECOND": 1000, "SECONDS": 1000,
	"MINUTE": 60_000, "MINUTES": 60_000,
	"HOUR": 3_600_000, "HOURS": 3_600_000,
	"DAY": tmDayMillis, "DAYS": tmDayMillis,
}

// tmPatternArgs: the argument positions holding a pattern, and those
// holding a time zone, for the functions that take them.
var tmPatternArgs = map[string]struct{ pattern, zones []int }{
	"FORMAT_TIMESTAMP":  {[]int{1}, []int{2}},
	"PARSE_TIMESTAMP":   {[]int{1}, []int{2}},
	"TIMESTAMPTOSTRING": {[]int{1}, []int{2}},
	"STRINGTOTIMESTAMP": {[]int{1}, []int{2}},
	"FORMAT_DATE":       {[]int{1}, nil},
	"PARSE_DATE":        {[]int{1}, nil},
	"DATETOSTRING":      {[]int{1}, nil},
	"STRINGTODATE":      {[]int{1}, nil},
	"FORMAT_TIME":       {[]int{1}, nil},
	"PARSE_TIME":        {[]int{1}, nil},
	"CONVERT_TZ":        {nil, []int{1, 2}},
}

// Letters a date (no time of day) or a time of day (no date) cannot
// format, as LocalDate and LocalTime refuse them.
const (
	tmTimeLetters = "HkhKmsSaXxZzV"
	tmDateLetters = "yuYGMLdDEXxZzV"
)

// IsTimeUnitArg reports whether argument i of the named function is a
// time-unit word (the SECONDS of TIMESTAMPADD(SECONDS, 5, t)), which the
// parser reads as a column reference but names no column.
func IsTimeUnitArg(name string, i int) bool {
	switch strings.ToUpper(name) {
	case "TIMESTAMPADD", "TIMESTAMPSUB", "DATEADD", "DATESUB", "TIMEADD", "TIMESUB":
		return i == 0
	}
	return false
}

// tmCompileCall handles, before the generic path, the calls whose
// arguments need their syntax: the unit word of TIMESTAMPADD and the like
// (the parser gives a column reference named SECONDS), literal patterns
// and zones to check now, and UNIX_TIMESTAMP() / UNIX_DATE(), which read
// the clock on each row and so must not fold to a constant.
func tmCompileCall(call *parser.FuncCall, scope Scope) (Compiled, bool, error) {
	switch call.Name {
	case "UNIX_TIMESTAMP", "UNIX_DATE":
		if len(call.Args) != 0 {
			return Compiled{}, false, nil
		}
		if call.Name == "UNIX_TIMESTAMP" {
			return Compiled{Type: types.BigIntType, Eval: func([]any) any { return time.Now().UnixMilli() }}, true, nil
		}
		return Compiled{Type: types.IntegerType, Eval: func([]any) any {
			return int32(tmFloorDiv(time.Now().UnixMilli(), tmDayMillis))
		}}, true, nil
	case "TIMESTAMPADD", "TIMESTAMPSUB", "DATEADD", "DATESUB", "TIMEADD", "TIMESUB": // see IsTimeUnitArg
		if len(call.Args) != 3 {
			return Compiled{}, true, errAt(call, fmt.Errorf("%w: function %s takes a time unit, an interval and a value", ErrType, call.Name))
		}
		ref, ok := call.Args[0].(*parser.ColumnRef)
		unit := ""
		if ok && ref.Source == "" {
			unit = ref.Name
		}
		if _, known := tmUnitMillis[unit]; !known {
			// An expression where the unit goes: ksqlDB names the
			// argument types it was given.
			if argTypes, err := compiledTypes(call.Args, scope); err == nil {
				return Compiled{}, true, errAt(call, fmt.Errorf("%w: Function '%s' does not accept parameters (%s).", ErrType, strings.ToLower(call.Name), argTypes))
			}
			return Compiled{}, true, errAt(call.Args[0], fmt.Errorf("%w: %s's first argument must be a time unit (MILLISECONDS, SECONDS, MINUTES, HOURS, DAYS), not %s", ErrType, call.Name, call.Args[0].String()))
		}
		c := *call
		c.Args = append([]parser.Expr{&parser.Literal{Pos: ref.Pos, Kind: parser.LitString, Str: unit}}, call.Args[1:]...)
		out, err := compileCall(&c, scope)
		return out, true, err
	}
	spec, ok := tmPatternArgs[call.Name]
	if !ok {
		return Compiled{}, false, nil
	}
	for _, i := range spec.pattern {
		lit, ok := tmStringLit(call, i)
		if !ok {
			continue
		}
		p, err := CompileJavaPattern(lit.Str)
		if err != nil {
			return Compiled{}, true, errAt(lit, err)
		}
		if why := tmPatternFits(call.Name, p); why != "" {
			return Compiled{}, true, errAt(lit, fmt.Errorf("%w: %s: pattern %q %s", ErrType, call.Name, lit.Str, why))
		}
	}
	for _, i := range spec.zones {
		if lit, ok := tmStringLit(call, i); ok {
			if _, err := LoadZone(lit.Str); err != nil {
				return Compiled{}, true, errAt(lit, fmt.Errorf("%w: %s: %v", ErrType, call.Name, err))
			}
		}
	}
	return Compiled{}, false, nil
}

// tmPatternFits says why a pattern cannot serve the function ("" when it
// can), as ksqlDB's LocalDate and LocalTime refuse: FORMAT_DATE and
// DATETOSTRING format no time of day or zone, FORMAT_TIME no date or zone;
// PARSE_DATE reads no time of day, PARSE_TIME no date; the parsers need a
// whole date (year, month and day) or an hour of the day.
func tmPatternFits(name string, p *JavaPattern) string {
	wholeDate := p.hasAny("yuY") && (p.hasAny("D") || (p.hasAny("ML") && p.hasAny("d")))
	hour := p.hasAny("Hk") || (p.hasAny("hK") && p.hasAny("a"))
	switch name {
	case "FORMAT_DATE", "DATETOSTRING":
		if p.hasAny(tmTimeLetters) {
			return "has time-of-day or zone fields, which a DATE cannot format"
		}
	case "FORMAT_TIME":
		if p.hasAny(tmDateLetters) {
			return "has date or zone fields, which a TIME cannot format"
		}
	case "PARSE_DATE":
		// java.text's parser, which ksqlDB's PARSE_DATE uses, takes the
		// fields a pattern lacks from 1970-01-01: "MMM-yyyy" is the
		// month's first day. Time fields are allowed; a value whose time
		// of day is not midnight reads as NULL, as ksqlDB fails it.
	case "STRINGTODATE":
		if !wholeDate {
			return "does not give a whole date (year, month and day)"
		}
	case "PARSE_TIME":
		if p.hasAny("yuYGMLdDE") {
			return "contains date fields"
		}
		if !hour {
			return "does not give an hour of the day"
		}
	}
	return ""
}

func tmStringLit(call *parser.FuncCall, i int) (*parser.Literal, bool) {
	if i >= len(call.Args) {
		return nil, false
	}
	lit, ok := call.Args[i].(*parser.Literal)
	return lit, ok && lit.Kind == parser.LitString
}

func tmFloorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// tmCheck checks argument kinds: want[i] lists the kinds argument i may
// have (a bare NULL fits anything).
func tmCheck(name string, args []types.Type, min int, want ...[]types.Kind) error {
	if err := argCount(name, args, min, len(want)); err != nil {
		return err
	}
	for i, t := range args {
		if t.Kind == types.Unknown {
			continue
		}
		ok := false
		for _, k := range want[i] {
			ok = ok || t.Kind == k
		}
		if !ok {
			return fmt.Errorf("%w: function %s does not accept %s as argument %d", errArgs, name, t, i+1)
		}
	}
	return nil
}

var (
	tmInts   = []types.Kind{types.Integer, types.BigInt}
	tmStr    = []types.Kind{types.String}
	tmTS     = []types.Kind{types.Timestamp}
	tmDateK  = []types.Kind{types.Date}
	tmTimeK  = []types.Kind{types.Time}
	tmIntK   = []types.Kind{types.Integer}
	tmAnyNil = func(a []any) bool {
		for _, v := range a {
			if v == nil {
				return true
			}
		}
		return false
	}
)

// tmZoneArg reads the optional zone argument at i (UTC when absent).
func tmZoneArg(a []any, i int) (*time.Location, bool) {
	if i >= len(a) {
		return time.UTC, true
	}
	s, ok := a[i].(string)
	if !ok {
		return nil, false
	}
	loc, err := LoadZone(s)
	return loc, err == nil
}

func tmPattern(v any) (*JavaPattern, bool) {
	s, ok := v.(string)
	if !ok {
		return nil, false
	}
	p, err := CompileJavaPattern(s)
	return p, err == nil
}

func tmDateTime(days int64) time.Time { return time.UnixMilli(days * tmDayMillis).UTC() }

func tmTimeOfDay(ms int64) time.Time {
	return time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(ms) * time.Millisecond)
}

// tmLocalDays and tmLocalMillis read a parsed time's local date and time
// of day, as LocalDate and LocalTime would hold them.
func tmLocalDays(t time.Time) int64 {
	y, m, d := t.Date()
	return tmFloorDiv(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).UnixMilli(), tmDayMillis)
}

func tmLocalMillis(t time.Time) int64 {
	return int64(t.Hour())*3_600_000 + int64(t.Minute())*60_000 + int64(t.Second())*1000 + int64(t.Nanosecond()/1e6)
}

type tmBind = func([]types.Type) (types.Type, func([]any) any, error)

func tmReg(name, doc string, bind tmBind) { register(&scalar{name: name, bind: bind, doc: doc}) }

func init() {
	tmReg("UNIX_TIMESTAMP", "UNIX_TIMESTAMP([ts]): epoch milliseconds of ts, or of now", func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := tmCheck("UNIX_TIMESTAMP", args, 0, tmTS); err != nil {
			return types.Type{}, nil, err
		}
		if len(args) == 0 { // reached only through a path that skips tmCompileCall
			return types.BigIntType, func([]any) any { return time.Now().UnixMilli() }, nil
		}
		return types.BigIntType, func(a []any) any {
			if ms, ok := a[0].(int64); ok {
				return ms
			}
			return nil
		}, nil
	})
	tmReg("UNIX_DATE", "UNIX_DATE([date]): days since the epoch of date, or of today (UTC)", func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := tmCheck("UNIX_DATE", args, 0, tmDateK); err != nil {
			return types.Type{}, nil, err
		}
		if len(args) == 0 {
			return types.IntegerType, func([]any) any { return int32(tmFloorDiv(time.Now().UnixMilli(), tmDayMillis)) }, nil
		}
		return types.IntegerType, func(a []any) any {
			if d, ok := a[0].(int32); ok {
				return d
			}
			return nil
		}, nil
	})
	tmReg("FROM_UNIXTIME", "FROM_UNIXTIME(ms): the TIMESTAMP ms milliseconds after the epoch", func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := tmCheck("FROM_UNIXTIME", args, 1, tmInts); err != nil {
			return types.Type{}, nil, err
		}
		return types.TimestampType, func(a []any) any {
			if ms, ok := types.AsInt64(a[0]); ok {
				return ms
			}
			return nil
		}, nil
	})
	tmReg("FROM_DAYS", "FROM_DAYS(n): the DATE n days after 1970-01-01", func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := tmCheck("FROM_DAYS", args, 1, tmIntK); err != nil {
			return types.Type{}, nil, err
		}
		return types.DateType, func(a []any) any {
			if d, ok := a[0].(int32); ok {
				return d
			}
			return nil
		}, nil
	})

	// Formatting: FORMAT_TIMESTAMP(ts, pattern[, zone]) and the older
	// TIMESTAMPTOSTRING(ms BIGINT, pattern[, zone]); dates and times.
	formatTS := func(name string, first []types.Kind) tmBind {
		return func(args []types.Type) (types.Type, func([]any) any, error) {
			if err := tmCheck(name, args, 2, first, tmStr, tmStr); err != nil {
				return types.Type{}, nil, err
			}
			return types.StringType, func(a []any) any {
				if tmAnyNil(a) {
					return nil
				}
				ms, ok := types.AsInt64(a[0])
				p, ok2 := tmPattern(a[1])
				loc, ok3 := tmZoneArg(a, 2)
				if !ok || !ok2 || !ok3 {
					return nil
				}
				return p.Format(time.UnixMilli(ms).In(loc))
			}, nil
		}
	}
	tmReg("FORMAT_TIMESTAMP", "FORMAT_TIMESTAMP(ts, pattern[, zone]): ts as text in zone (UTC)", formatTS("FORMAT_TIMESTAMP", tmTS))
	tmReg("TIMESTAMPTOSTRING", "TIMESTAMPTOSTRING(ms, pattern[, zone]): epoch ms as text in zone (UTC)", formatTS("TIMESTAMPTOSTRING", tmInts))

	formatLocal := func(name string, first []types.Kind, toTime func(int64) time.Time) tmBind {
		return func(args []types.Type) (types.Type, func([]any) any, error) {
			if err := tmCheck(name, args, 2, first, tmStr); err != nil {
				return types.Type{}, nil, err
			}
			return types.StringType, func(a []any) any {
				if tmAnyNil(a) {
					return nil
				}
				n, ok := types.AsInt64(a[0])
				p, ok2 := tmPattern(a[1])
				if !ok || !ok2 || tmPatternFits(name, p) != "" {
					return nil
				}
				return p.Format(toTime(n))
			}, nil
		}
	}
	tmReg("FORMAT_DATE", "FORMAT_DATE(date, pattern): date as text", formatLocal("FORMAT_DATE", tmDateK, tmDateTime))
	tmReg("DATETOSTRING", "DATETOSTRING(days INT, pattern): days since the epoch as date text", formatLocal("DATETOSTRING", tmIntK, tmDateTime))
	tmReg("FORMAT_TIME", "FORMAT_TIME(time, pattern): time of day as text", formatLocal("FORMAT_TIME", tmTimeK, tmTimeOfDay))

	// Parsing: the inverse of each.
	parse := func(name string, out types.Type, zoned bool, conv func(time.Time) any) tmBind {
		return func(args []types.Type) (types.Type, func([]any) any, error) {
			var err error
			if zoned {
				err = tmCheck(name, args, 2, tmStr, tmStr, tmStr)
			} else {
				err = tmCheck(name, args, 2, tmStr, tmStr)
			}
			if err != nil {
				return types.Type{}, nil, err
			}
			return out, func(a []any) any {
				if tmAnyNil(a) {
					return nil
				}
				s, _ := a[0].(string)
				p, ok := tmPattern(a[1])
				loc, ok2 := tmZoneArg(a, 2)
				if !ok || !ok2 || tmPatternFits(name, p) != "" {
					return nil
				}
				read := p.Parse
				if name == "PARSE_DATE" {
					read = p.ParseLeading // java.text's parser leaves trailing text
				}
				t, err := read(s, loc)
				if err != nil {
					return nil
				}
				if name == "PARSE_DATE" && tmLocalMillis(t) != 0 {
					return nil // ksqlDB: "Date format contains time field."
				}
				return conv(t)
			}, nil
		}
	}
	epoch := func(t time.Time) any { return t.UnixMilli() }
	tmReg("PARSE_TIMESTAMP", "PARSE_TIMESTAMP(text, pattern[, zone]): the TIMESTAMP text names, read in zone (UTC)", parse("PARSE_TIMESTAMP", types.TimestampType, true, epoch))
	tmReg("STRINGTOTIMESTAMP", "STRINGTOTIMESTAMP(text, pattern[, zone]): epoch ms of text, read in zone (UTC)", parse("STRINGTOTIMESTAMP", types.BigIntType, true, epoch))
	days := func(t time.Time) any { return int32(tmLocalDays(t)) }
	tmReg("PARSE_DATE", "PARSE_DATE(text, pattern): the DATE text names", parse("PARSE_DATE", types.DateType, false, days))
	tmReg("STRINGTODATE", "STRINGTODATE(text, pattern): days since the epoch of the date text names", parse("STRINGTODATE", types.IntegerType, false, days))
	tmReg("PARSE_TIME", "PARSE_TIME(text, pattern): the TIME text names", parse("PARSE_TIME", types.TimeType, false, func(t time.Time) any { return int32(tmLocalMillis(t)) }))

	tmReg("CONVERT_TZ", "CONVERT_TZ(ts, from, to): ts read as local time in zone from, rewritten as local time in zone to", func(args []types.Type) (types.Type, func([]any) any, error) {
		if err := tmCheck("CONVERT_TZ", args, 3, tmTS, tmStr, tmStr); err != nil {
			return types.Type{}, nil, err
		}
		return types.TimestampType, func(a []any) any {
			if tmAnyNil(a) {
				return nil
			}
			ms, _ := a[0].(int64)
			from, ok := tmZoneArg(a, 1)
			to, ok2 := tmZoneArg(a, 2)
			if !ok || !ok2 {
				return nil
			}
			// As ksqlDB: shift by the difference of the zones' offsets at
			// the instant ms.
			t := time.UnixMilli(ms)
			_, offTo := t.In(to).Zone()
			_, offFrom := t.In(from).Zone()
			return ms + int64(offTo-offFrom)*1000
		}, nil
	})

	// Arithmetic: the unit arrives as a STRING literal (tmCompileCall).
	arith := func(name string, sign int64, valueKinds []types.Kind, intervalKinds []types.Kind, out types.Type, apply func(v, delta int64) any) tmBind {
		return func(args []types.Type) (types.Type, func([]any) any, error) {
			if err := tmCheck(name, args, 3, tmStr, intervalKinds, valueKinds); err != nil {
				return types.Type{}, nil, err
			}
			return out, func(a []any) any {
				if tmAnyNil(a) {
					return nil
				}
				unit, _ := a[0].(string)
				n, ok := types.AsInt64(a[1])
				v, ok2 := types.AsInt64(a[2])
				if !ok || !ok2 {
					return nil
				}
				return apply(v, sign*n*tmUnitMillis[unit])
			}, nil
		}
	}
	addTS := func(v, d int64) any { return v + d }
	// DATEADD adds in milliseconds and truncates to whole days, as
	// ksqlDB's TimeUnit.MILLISECONDS.toDays does (toward zero).
	addDate := func(v, d int64) any { return int32((v*tmDayMillis + d) / tmDayMillis) }
	// TIMEADD wraps around midnight, as LocalTime.plus does.
	addTime := func(v, d int64) any { return int32(((v+d)%tmDayMillis + tmDayMillis) % tmDayMillis) }
	tmReg("TIMESTAMPADD", "TIMESTAMPADD(unit, n, ts): ts plus n units", arith("TIMESTAMPADD", 1, tmTS, tmInts, types.TimestampType, addTS))
	tmReg("TIMESTAMPSUB", "TIMESTAMPSUB(unit, n, ts): ts minus n units", arith("TIMESTAMPSUB", -1, tmTS, tmInts, types.TimestampType, addTS))
	tmReg("DATEADD", "DATEADD(unit, n, date): date plus n units, in whole days", arith("DATEADD", 1, tmDateK, tmIntK, types.DateType, addDate))
	tmReg("DATESUB", "DATESUB(unit, n, date): date minus n units, in whole days", arith("DATESUB", -1, tmDateK, tmIntK, types.DateType, addDate))
	tmReg("TIMEADD", "TIMEADD(unit, n, time): time plus n units, wrapping at midnight", arith("TIMEADD", 1, tmTimeK, tmIntK, types.TimeType, addTime))
	tmReg("TIMESUB", "TIMESUB(unit, n, time): time minus n units, wrapping at midnight", arith("TIMESUB", -1, tmTimeK, tmIntK, types.TimeType, addTime))
}

// tmCastToString renders TIMESTAMP, DATE and TIME as ksqlDB's CAST to
// STRING does: 2024-01-01T00:00:00.000 (UTC), 2024-01-01, and 13:05 or
// 13:05:09 (LocalTime of the whole seconds).
func tmCastToString(k types.Kind) func(any) any {
	return func(v any) any {
		n, ok := types.AsInt64(v)
		if !ok {
			return types.FormatValue(v)
		}
		switch k {
		case types.Timestamp:
			return time.UnixMilli(n).UTC().Format("2006-01-02T15:04:05.000")
		case types.Date:
			return tmDateTime(n).Format("2006-01-02")
		}
		t := tmTimeOfDay(n)
		if t.Second() == 0 {
			return t.Format("15:04")
		}
		return t.Format("15:04:05")
	}
}

// tmCastFunc gives the casts among TIMESTAMP, DATE, TIME and from STRING
// to DATE and TIME, or nil for any other pair.
func tmCastFunc(from, to types.Kind) func(any) any {
	switch {
	case from == types.Date && to == types.Timestamp:
		return func(v any) any {
			d, ok := types.AsInt64(v)
			if !ok {
				return nil
			}
			return d * tmDayMillis
		}
	case from == types.Timestamp && (to == types.Date || to == types.Time):
		return func(v any) any {
			ms, ok := v.(int64)
			if !ok {
				return nil
			}
			if to == types.Date {
				return int32(tmFloorDiv(ms, tmDayMillis))
			}
			return int32(ms - tmFloorDiv(ms, tmDayMillis)*tmDayMillis)
		}
	case from == types.String && to == types.Date:
		return func(v any) any {
			s, _ := v.(string)
			t, err := time.Parse("2006-01-02", strings.TrimSpace(s))
			if err != nil {
				return nil
			}
			return int32(tmLocalDays(t))
		}
	case from == types.String && to == types.Time:
		return func(v any) any {
			s, _ := v.(string)
			s = strings.TrimSpace(s)
			for _, layout := range []string{"15:04:05.999999999", "15:04"} {
				if t, err := time.Parse(layout, s); err == nil {
					return int32(tmLocalMillis(t))
				}
			}
			return nil
		}
	}
	return nil
}

// compiledTypes lists the types of args, as ksqlDB's "does not accept
// parameters (…)" errors print them.
func compiledTypes(args []parser.Expr, scope Scope) (string, error) {
	names := make([]string, len(args))
	for i, a := range args {
		c, err := Compile(a, scope)
		if err != nil {
			return "", err
		}
		names[i] = c.Type.String()
	}
	return strings.Join(names, ", "), nil
}
