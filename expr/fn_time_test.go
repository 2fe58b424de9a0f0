package expr_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/types"
)

var (
	tTS   = types.TimestampType
	tDate = types.DateType
	tTime = types.TimeType
)

// testRow's TS is 2024-01-01T00:00:00Z = 1704067200000 ms, day 19723.
var timeFunctionCases = []evalCase{
	{"UNIX_TIMESTAMP(ts)", tBig, int64(1704067200000)},
	{"UNIX_TIMESTAMP(FROM_UNIXTIME(ni))", tBig, nil},
	{"UNIX_TIMESTAMP(null)", tBig, nil},
	{"UNIX_DATE(FROM_DAYS(19723))", tInt, int32(19723)},
	{"UNIX_DATE(FROM_DAYS(ni))", tInt, nil},
	{"FROM_UNIXTIME(b)", tTS, int64(10)},
	{"FROM_UNIXTIME(1704067200000)", tTS, int64(1704067200000)},
	{"FROM_UNIXTIME(ni)", tTS, nil},
	{"FROM_DAYS(-1)", tDate, int32(-1)},
	{"FROM_DAYS(ni)", tDate, nil},

	{"FORMAT_TIMESTAMP(ts, 'yyyy-MM-dd''T''HH:mm:ss.SSSXXX')", tString, "2024-01-01T00:00:00.000Z"},
	{"FORMAT_TIMESTAMP(ts, 'yyyy-MM-dd HH:mm:ss z', 'America/Los_Angeles')", tString, "2023-12-31 16:00:00 PST"},
	{"FORMAT_TIMESTAMP(ts, 'EEE, d MMM yy h:mm a Z', '+05:30')", tString, "Mon, 1 Jan 24 5:30 AM +0530"},
	{"FORMAT_TIMESTAMP(ts, 'EEEE MMMM dd, yyyy HH:mm X', 'Asia/Kolkata')", tString, "Monday January 01, 2024 05:30 +0530"},
	{"FORMAT_TIMESTAMP(FROM_UNIXTIME(1720000000123), 'HH:mm:ss.SSS xx VV', 'Europe/Berlin')", tString, "11:46:40.123 +0200 Europe/Berlin"},
	// YYYY is the week-based year: 2023-12-31 is a Sunday, in 2024's week 1.
	{"FORMAT_TIMESTAMP(FROM_UNIXTIME(1703980800000), 'YYYY yyyy G')", tString, "2024 2023 AD"},
	{"FORMAT_TIMESTAMP(FROM_UNIXTIME(1703894400000), 'YYYY-MM-dd')", tString, "2023-12-30"},
	{"FORMAT_TIMESTAMP(FROM_UNIXTIME(ni), 'yyyy')", tString, nil},
	{"FORMAT_TIMESTAMP(ts, ns)", tString, nil},
	{"FORMAT_TIMESTAMP(ts, 'yyyy', ns)", tString, nil},
	{"FORMAT_TIMESTAMP(ts, 'yyyy', s)", tString, nil}, // zone 'abc' is unknown: NULL
	{"TIMESTAMPTOSTRING(1704067200000, 'yyyy-MM-dd HH:mm:ss')", tString, "2024-01-01 00:00:00"},
	{"TIMESTAMPTOSTRING(1704067200000, 'yyyy-MM-dd HH:mm:ss', 'America/New_York')", tString, "2023-12-31 19:00:00"},
	{"TIMESTAMPTOSTRING(b, 'ss.SSS')", tString, "00.010"},
	{"TIMESTAMPTOSTRING(ni, 'yyyy')", tString, nil},

	{"PARSE_TIMESTAMP('2024-01-01 00:00:00', 'yyyy-MM-dd HH:mm:ss')", tTS, int64(1704067200000)},
	{"PARSE_TIMESTAMP('2024-01-01T01:00:00+01:00', 'yyyy-MM-dd''T''HH:mm:ssXXX')", tTS, int64(1704067200000)},
	{"PARSE_TIMESTAMP('2023-12-31 16:00', 'yyyy-MM-dd HH:mm', 'America/Los_Angeles')", tTS, int64(1704067200000)},
	{"PARSE_TIMESTAMP('01/01/2024 12:00:00.5 AM', 'MM/dd/yyyy hh:mm:ss.S a')", tTS, int64(1704067200500)},
	{"PARSE_TIMESTAMP('Jan 1 2024', 'MMM d yyyy')", tTS, int64(1704067200000)},
	{"PARSE_TIMESTAMP('20240101000000', 'yyyyMMddHHmmss')", tTS, int64(1704067200000)},
	{"PARSE_TIMESTAMP('2024-01-01 Europe/London', 'yyyy-MM-dd VV')", tTS, int64(1704067200000)},
	{"PARSE_TIMESTAMP('2023-12-31 19:00 EST', 'yyyy-MM-dd HH:mm z')", tTS, int64(1704067200000)},
	{"PARSE_TIMESTAMP('2024-07-01 00:00 PDT', 'yyyy-MM-dd HH:mm z')", tTS, int64(1719817200000)},
	{"PARSE_TIMESTAMP('2024-01-01 Mars/Base', 'yyyy-MM-dd VV')", tTS, nil},
	// A pattern without a year defaults to 1970, as ksqlDB's parser does.
	{"PARSE_TIMESTAMP('10:00', 'HH:mm')", tTS, int64(36_000_000)},
	// DST gap: 02:30 does not exist in New York on 2024-03-10; java.time
	// moves it forward by the gap to 03:30 EDT (07:30Z).
	{"PARSE_TIMESTAMP('2024-03-10 02:30', 'yyyy-MM-dd HH:mm', 'America/New_York')", tTS, int64(1710055800000)},
	// DST overlap: 01:30 on 2024-11-03 happens twice; ksqlDB's parser keeps
	// the offset New York had on 1970-01-01 (EST), so the later one wins…
	{"PARSE_TIMESTAMP('2024-11-03 01:30', 'yyyy-MM-dd HH:mm', 'America/New_York')", tTS, int64(1730615400000)},
	// …and in Sydney (no DST until 1971) standard time too: AEST, not AEDT.
	{"PARSE_TIMESTAMP('2024-04-07 02:30', 'yyyy-MM-dd HH:mm', 'Australia/Sydney')", tTS, int64(1712421000000)},
	// A zone in the text wins over the zone argument.
	{"PARSE_TIMESTAMP('2024-01-01 00:00 +0000', 'yyyy-MM-dd HH:mm Z', 'Asia/Tokyo')", tTS, int64(1704067200000)},
	// Day past the month's end resolves to its last day (SMART resolver).
	{"PARSE_TIMESTAMP('2023-02-30', 'yyyy-MM-dd')", tTS, int64(1677542400000)},
	{"PARSE_TIMESTAMP('2024-13-01', 'yyyy-MM-dd')", tTS, nil},
	// …and 24:00 is the next day's midnight; nothing later is.
	{"PARSE_TIMESTAMP('2023-12-31 24:00', 'yyyy-MM-dd HH:mm')", tTS, int64(1704067200000)},
	{"PARSE_TIMESTAMP('2023-12-31 24:01', 'yyyy-MM-dd HH:mm')", tTS, nil},
	{"PARSE_TIMESTAMP('not a date', 'yyyy-MM-dd')", tTS, nil},
	{"PARSE_TIMESTAMP('2024-01-01 junk', 'yyyy-MM-dd')", tTS, nil},
	{"PARSE_TIMESTAMP(ns, 'yyyy-MM-dd')", tTS, nil},
	{"PARSE_TIMESTAMP('2024-01-01', ns)", tTS, nil},
	{"PARSE_TIMESTAMP('2024-01-01', 'yyyy-MM-dd', ns)", tTS, nil},
	{"STRINGTOTIMESTAMP('2024-01-01 00:00:00.010', 'yyyy-MM-dd HH:mm:ss.SSS')", tBig, int64(1704067200010)},
	{"STRINGTOTIMESTAMP('2024-01-01 09:00', 'yyyy-MM-dd HH:mm', 'Asia/Tokyo')", tBig, int64(1704067200000)},
	{"STRINGTOTIMESTAMP(ns, 'yyyy')", tBig, nil},
	// java.time's parsers are built case-insensitive: "z" is the zone Z.
	{"STRINGTOTIMESTAMP('2020-05-11T21:58:33z', 'yyyy-MM-dd''T''HH:mm:ssX')", tBig, int64(1589234313000)},

	{"CONVERT_TZ(ts, 'UTC', 'America/Los_Angeles')", tTS, int64(1704067200000 - 8*3_600_000)},
	{"CONVERT_TZ(ts, 'Asia/Kolkata', 'UTC')", tTS, int64(1704067200000 - 5*3_600_000 - 30*60_000)},
	{"CONVERT_TZ(FROM_UNIXTIME(1720000000000), 'Europe/London', 'America/New_York')", tTS, int64(1720000000000 - 5*3_600_000)},
	{"CONVERT_TZ(ts, ns, 'UTC')", tTS, nil},
	{"CONVERT_TZ(FROM_UNIXTIME(ni), 'UTC', 'UTC')", tTS, nil},

	{"TIMESTAMPADD(SECONDS, 5, ts)", tTS, int64(1704067205000)},
	{"TIMESTAMPADD(MILLISECOND, -1, ts)", tTS, int64(1704067199999)},
	{"TIMESTAMPADD(DAYS, i, ts)", tTS, int64(1704067200000 + 7*86_400_000)},
	{"TIMESTAMPADD(HOURS, ni, ts)", tTS, nil},
	{"TIMESTAMPADD(HOURS, 1, FROM_UNIXTIME(ni))", tTS, nil},
	{"TIMESTAMPSUB(MINUTES, 2, ts)", tTS, int64(1704067200000 - 120_000)},
	{"TIMESTAMPSUB(MINUTES, ni, ts)", tTS, nil},
	{"DATEADD(DAYS, 3, FROM_DAYS(19723))", tDate, int32(19726)},
	{"DATEADD(HOURS, 47, FROM_DAYS(19723))", tDate, int32(19724)},
	{"DATEADD(DAYS, ni, FROM_DAYS(19723))", tDate, nil},
	{"DATESUB(DAYS, 19724, FROM_DAYS(19723))", tDate, int32(-1)},
	{"DATESUB(DAY, 1, FROM_DAYS(ni))", tDate, nil},
	{"TIMEADD(HOURS, 1, PARSE_TIME('23:30', 'HH:mm'))", tTime, int32(1_800_000)},
	{"TIMEADD(SECONDS, 90, PARSE_TIME('00:00', 'HH:mm'))", tTime, int32(90_000)},
	{"TIMEADD(SECONDS, ni, PARSE_TIME('00:00', 'HH:mm'))", tTime, nil},
	{"TIMESUB(MINUTES, 1, PARSE_TIME('00:00:30', 'HH:mm:ss'))", tTime, int32(86_370_000)},
	{"TIMESUB(MINUTES, 1, PARSE_TIME(ns, 'HH:mm'))", tTime, nil},

	{"FORMAT_DATE(FROM_DAYS(19723), 'yyyy-MM-dd')", tString, "2024-01-01"},
	{"FORMAT_DATE(FROM_DAYS(-1), 'dd/MM/yy EEE')", tString, "31/12/69 Wed"},
	{"FORMAT_DATE(FROM_DAYS(ni), 'yyyy')", tString, nil},
	{"FORMAT_DATE(FROM_DAYS(1), s)", tString, nil}, // 'abc': not a valid pattern
	{"PARSE_DATE('2024-01-01', 'yyyy-MM-dd')", tDate, int32(19723)},
	{"PARSE_DATE('1969-12-31', 'yyyy-MM-dd')", tDate, int32(-1)},
	{"PARSE_DATE('01-jan-2024', 'dd-MMM-yyyy')", tDate, int32(19723)},
	{"PARSE_DATE('2024-01-01', s)", tDate, nil}, // 'abc' is no whole date
	{"STRINGTODATE('01-Jan-2024 10:00', 'dd-MMM-yyyy HH:mm')", tInt, int32(19723)},
	{"PARSE_DATE('2024/01/01', 'yyyy-MM-dd')", tDate, nil},
	// ksqlDB's PARSE_DATE reads with java.text's parser: fields the
	// pattern lacks come from 1970-01-01, and text after the pattern's
	// end is left unread.
	{"PARSE_DATE('JAN-2022', 'MMM-yyyy')", tDate, int32(18993)},
	{"PARSE_DATE('2022', 'yyyy')", tDate, int32(18993)},
	{"PARSE_DATE('2003-12-24-01-01', 'yyyy-MM-dd')", tDate, int32(12410)},
	{"PARSE_DATE('2004', 'yyyy-MM-dd')", tDate, nil},
	{"PARSE_DATE('2021-01-01 00:00', 'yyyy-MM-dd HH:mm')", tDate, int32(18628)},
	{"PARSE_DATE('2021-01-01 10:00', 'yyyy-MM-dd HH:mm')", tDate, nil}, // a time of day: ksqlDB fails the call
	{"PARSE_DATE('1/5/2019', 'dd/MM/yyyy')", tDate, int32(18017)},
	{"STRINGTODATE('1/5/2019', 'dd/MM/yyyy')", tInt, nil},
	{"STRINGTODATE('2024-01-01x', 'yyyy-MM-dd')", tInt, nil},
	{"PARSE_DATE(ns, 'yyyy-MM-dd')", tDate, nil},
	{"DATETOSTRING(19723, 'yyyy-MM-dd')", tString, "2024-01-01"},
	{"DATETOSTRING(ni, 'yyyy-MM-dd')", tString, nil},
	{"STRINGTODATE('2024-01-01', 'yyyy-MM-dd')", tInt, int32(19723)},
	{"STRINGTODATE(ns, 'yyyy-MM-dd')", tInt, nil},
	{"FORMAT_TIME(PARSE_TIME('13:05:09.250', 'HH:mm:ss.SSS'), 'h:mm:ss.SS a')", tString, "1:05:09.25 PM"},
	{"FORMAT_TIME(PARSE_TIME('00:00', 'HH:mm'), 'hh ''o''''clock'' a')", tString, "12 o'clock AM"},
	{"FORMAT_TIME(PARSE_TIME(ns, 'HH:mm'), 'HH')", tString, nil},
	{"PARSE_TIME('12:34:56', 'HH:mm:ss')", tTime, int32(45_296_000)},
	{"PARSE_TIME('9:05 PM', 'h:mm a')", tTime, int32(75_900_000)},
	{"PARSE_TIME('25:00', 'HH:mm')", tTime, nil},
	{"PARSE_TIME(ns, 'HH:mm')", tTime, nil},
}

func init() { functionCaseSets = append(functionCaseSets, timeFunctionCases) }

func TestTimeFunctionCompileErrors(t *testing.T) {
	for src, want := range map[string]string{
		"FORMAT_TIMESTAMP(ts, 'yyyy-qq')":                  "unknown pattern letter 'q'",
		"FORMAT_TIMESTAMP(ts, 'yyyy''T')":                  "unclosed quote",
		"PARSE_TIMESTAMP(s, 'yyyy', 'Mars/Olympus')":       "unknown time zone",
		"CONVERT_TZ(ts, 'UTC', 'nowhere')":                 "unknown time zone",
		"FORMAT_DATE(FROM_DAYS(1), 'yyyy HH')":             "which a DATE cannot format",
		"FORMAT_TIME(PARSE_TIME('1', 'H'), 'yyyy')":        "which a TIME cannot format",
		"STRINGTODATE(s, 'MM-dd')":                         "whole date",
		"PARSE_TIME(s, 'yyyy HH')":                         "contains date fields",
		"PARSE_TIME(s, 'mm:ss')":                           "hour of the day",
		"TIMESTAMPADD(WEEKS, 1, ts)":                       "must be a time unit",
		"TIMESTAMPADD('SECONDS', 1, ts)":                   "Function 'timestampadd' does not accept parameters (STRING, INTEGER, TIMESTAMP).",
		"TIMESTAMPADD(SECONDS, 1)":                         "takes a time unit",
		"TIMESTAMPADD(SECONDS, 'x', ts)":                   "does not accept",
		"DATEADD(DAYS, 1, ts)":                             "does not accept",
		"FORMAT_TIMESTAMP(b, 'yyyy')":                      "does not accept",
		"UNIX_TIMESTAMP(ts, ts)":                           "does not accept 2 arguments",
		"PARSE_DATE('2024-01-01', 'yyyy-MM-dd', 'UTC')":    "does not accept 3 arguments",
		"STRINGTODATE('2024', 'yyyy-MM-dd''T''HH:mm:ss[')": "reserved",
	} {
		_, err := compileExpr(t, src)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", src, err, want)
		}
	}
}

func TestTimeFunctionsReadTheClock(t *testing.T) {
	for _, src := range []string{"UNIX_TIMESTAMP()", "UNIX_DATE()"} {
		c, err := compileExpr(t, src)
		if err != nil {
			t.Fatal(err)
		}
		if c.Const {
			t.Errorf("%s folded to a constant; it must read the clock per row", src)
		}
		now := time.Now().UnixMilli()
		got, _ := types.AsInt64(c.Eval(testRow))
		want := now
		if src == "UNIX_DATE()" {
			want = now / 86_400_000
			if got != want && got != want+1 {
				t.Errorf("%s = %d, want %d", src, got, want)
			}
		} else if got < now || got > now+5000 {
			t.Errorf("%s = %d, want about %d", src, got, now)
		}
	}
}

func TestJavaPatternRoundTrip(t *testing.T) {
	loc, err := expr.LoadZone("America/Sao_Paulo")
	if err != nil {
		t.Fatal(err)
	}
	for _, pat := range []string{
		"yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "yyyy-MM-dd HH:mm:ss.SSS", "dd MMMM yyyy hh:mm:ss.SSS a Z",
		"EEE, dd MMM yyyy HH:mm:ss.SSS xx", "yyyyMMddHHmmssSSS", "uuuu-MM-dd'T'HH:mm:ss.SSS VV", "G yyyy-MM-dd HH:mm:ss.SSS XXXXX",
	} {
		const ms = int64(1_234_567_890_123)
		s, err := expr.FormatJavaTime(ms, pat, loc)
		if err != nil {
			t.Fatal(err)
		}
		back, err := expr.ParseJavaTime(s, pat, loc)
		if err != nil || back != ms {
			t.Errorf("%s: %q parses back to %d, %v; want %d", pat, s, back, err, ms)
		}
	}
	for zone, want := range map[string]string{"+05:30": "+05:30", "UTC-3": "-03:00", "GMT+01:00": "+01:00", "Z": "Z"} {
		l, err := expr.LoadZone(zone)
		if err != nil {
			t.Fatalf("%s: %v", zone, err)
		}
		if got, _ := expr.FormatJavaTime(0, "XXX", l); got != want {
			t.Errorf("zone %s formats as %q, want %q", zone, got, want)
		}
	}
}

func TestTimeCasts(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"CAST(ts AS STRING)", tString, "2024-01-01T00:00:00.000"},
		{"CAST(FROM_UNIXTIME(-1) AS STRING)", tString, "1969-12-31T23:59:59.999"},
		{"CAST(FROM_DAYS(19025) AS STRING)", tString, "2022-02-02"},
		{"CAST(PARSE_TIME('13:05', 'HH:mm') AS STRING)", tString, "13:05"},
		{"CAST(PARSE_TIME('13:05:09.5', 'HH:mm:ss.S') AS STRING)", tString, "13:05:09"},
		{"CAST(FROM_DAYS(ni) AS STRING)", tString, nil},
		{"CAST('2022-02-02' AS DATE)", tDate, int32(19025)},
		{"CAST('2022-02-30' AS DATE)", tDate, nil},
		{"CAST('13:05:09.5' AS TIME)", tTime, int32(47_109_500)},
		{"CAST('13:05' AS TIME)", tTime, int32(47_100_000)},
		{"CAST('noon' AS TIME)", tTime, nil},
		{"CAST(FROM_DAYS(1) AS TIMESTAMP)", tTS, int64(86_400_000)},
		{"CAST(FROM_UNIXTIME(-1) AS DATE)", tDate, int32(-1)},
		{"CAST(FROM_UNIXTIME(-1) AS TIME)", tTime, int32(86_399_999)},
		{"CAST(TIMESTAMPADD(HOURS, 5, ts) AS TIME)", tTime, int32(18_000_000)},
	})
}

// FuzzJavaPattern checks that no pattern or text makes the pattern code
// panic, and that what a pattern formats it parses back (to the second,
// for patterns with every field down to the second and a zone).
func FuzzJavaPattern(f *testing.F) {
	for _, seed := range []struct{ pat, text string }{
		{"yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2024-01-01T00:00:00.000Z"},
		{"dd MMM yy h:mm a z", "01 Jan 24 1:00 PM PST"},
		{"''''yyyy'", "x"}, {"GGGG YYYY ZZZZ", "AD 2024 GMT+08:00"}, {"EEEE, d MMMM uuuu", ""},
	} {
		f.Add(seed.pat, seed.text)
	}
	f.Fuzz(func(t *testing.T, pat, text string) {
		p, err := expr.CompileJavaPattern(pat)
		if err != nil {
			return
		}
		_, _ = p.Parse(text, time.UTC)
		_ = p.Format(time.UnixMilli(1_700_000_000_123).UTC())
	})
}
