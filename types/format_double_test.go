package types_test

import (
	"math"
	"testing"

	"github.com/sluice-sql/sluice/types"
)

// Java's Double.toString: E notation is "1.0E7", not Go's "1E+07".
func TestFormatDoubleScientific(t *testing.T) {
	for in, want := range map[float64]string{1e7: "1.0E7", 1e-4: "1.0E-4", 1.5e10: "1.5E10", 123456789: "1.23456789E8", -2.5e-7: "-2.5E-7", 1e21: "1.0E21",
		// One shortest digit: the two-digit decimal nearest the exact value.
		math.SmallestNonzeroFloat64: "4.9E-324", -math.SmallestNonzeroFloat64: "-4.9E-324", 1e23: "1.0E23", 2e-323: "2.0E-323"} {
		if got := types.FormatDouble(in); got != want {
			t.Errorf("FormatDouble(%v) = %q, want %q", in, got, want)
		}
	}
}

// In JSON a double is Java's text as a number; NaN and the infinities,
// which JSON lacks, are strings (Jackson's default).
func TestAppendJSONDouble(t *testing.T) {
	for in, want := range map[float64]string{30: "30.0", 1e7: "1.0E7", 1.5e-4: "1.5E-4", -0.5: "-0.5",
		math.Inf(1): `"Infinity"`, math.Inf(-1): `"-Infinity"`} {
		if got := string(types.AppendJSONDouble(nil, in)); got != want {
			t.Errorf("AppendJSONDouble(%v) = %s, want %s", in, got, want)
		}
	}
	if got := string(types.AppendJSONDouble([]byte("x:"), math.NaN())); got != `x:"NaN"` {
		t.Errorf("AppendJSONDouble(NaN) = %s", got)
	}
}

// FormatFloat32 prints a float's own shortest digits, as Java's
// Float.toString.
func TestFormatFloat32(t *testing.T) {
	for in, want := range map[float32]string{
		1.1:            "1.1",
		0.1:            "0.1",
		10:             "10.0",
		1e10:           "1.0E10",
		1e-5:           "1.0E-5",
		3.4028235e38:   "3.4028235E38",
		-2.5:           "-2.5",
		1.4e-45:        "1.4E-45",
		float32(1) / 3: "0.33333334",
	} {
		if got := types.FormatFloat32(in); got != want {
			t.Errorf("FormatFloat32(%v) = %q, want %q", in, got, want)
		}
	}
}
