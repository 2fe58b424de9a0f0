package planner

import "testing"

func TestPartialTimestamp(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		bad  bool
	}{
		{in: "2018", want: 1514764800000},
		{in: "2018-01-01T00:00:00.001", want: 1514764800001},
		{in: "2018-01-01T00:00:01", want: 1514764801000},
		{in: "2019-01-01T00:00:00+0445", want: 1546300800000 - (4*3600+45*60)*1000},
		{in: "2020-02-10T08:31:44.001+0000", want: 1581323504001},
		{in: "2020-02-10T08:31:44.001-01:00", want: 1581323504001 + 3600*1000},
		{in: "2018-02", want: 1517443200000},
		{in: "2018-01-01T10Z", want: 1514764800000 + 10*3600*1000},
		// java.time's SMART resolver: 24:00 is the next day's midnight,
		// a day past the month's end is its last day.
		{in: "2020-02-24T24", want: 1582588800000},
		{in: "2020-02-28T24:00:00.000", want: 1582934400000},
		{in: "2020-02-24T24:01", bad: true},
		{in: "2021-02-30", want: 1614470400000},
		{in: "yesterday", bad: true},
		{in: "2018-01-01T00:00+5", bad: true},
	} {
		got, err := partialTimestamp(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("partialTimestamp(%q) = %d, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("partialTimestamp(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}
