package types

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/cockroachdb/apd/v3"
)

// MaxDecimalPrecision is the largest DECIMAL precision, as in ksqlDB.
const MaxDecimalPrecision = 38

// DecimalOf returns DECIMAL(precision, scale).
func DecimalOf(precision, scale int) Type {
	return Type{Kind: Decimal, Precision: precision, Scale: scale}
}

// ErrDecimalOverflow is returned when a value has more integer digits than
// its DECIMAL type allows (ksqlDB's "Numeric field overflow").
var ErrDecimalOverflow = errors.New("numeric field overflow")

// ErrDecimalRounding is returned when a value must fit a DECIMAL type
// exactly but has more fractional digits than the scale.
var ErrDecimalRounding = errors.New("decimal does not fit without rounding")

// decimalCtx does the arithmetic of the helpers below: ample precision so
// that no operation on DECIMAL(38, s) values rounds by accident.
var decimalCtx = apd.Context{
	Precision:   2 * MaxDecimalPrecision,
	MaxExponent: apd.MaxExponent,
	MinExponent: apd.MinExponent,
	Traps:       apd.DefaultTraps,
	Rounding:    apd.RoundHalfUp,
}

// DecimalContext returns a copy of the context Sluice computes decimals
// with: 76 significant digits, HALF_UP rounding.
func DecimalContext() *apd.Context {
	c := decimalCtx
	return &c
}

// ParseDecimal reads decimal text such as "-01.50" or "1E+3". NaN and
// infinities are refused: BigDecimal has none.
func ParseDecimal(s string) (*apd.Decimal, error) {
	d, _, err := apd.NewFromString(s)
	if err != nil {
		return nil, fmt.Errorf("invalid decimal %q", s)
	}
	if d.Form != apd.Finite {
		return nil, fmt.Errorf("invalid decimal %q", s)
	}
	return d, nil
}

// DecimalFromFloat converts a double as BigDecimal.valueOf does: through
// its shortest decimal text, so 0.1 becomes exactly 0.1.
func DecimalFromFloat(f float64) (*apd.Decimal, error) {
	return ParseDecimal(strconv.FormatFloat(f, 'g', -1, 64))
}

// DecimalFromInt converts an integer exactly.
func DecimalFromInt(n int64) *apd.Decimal { return apd.New(n, 0) }

// FitDecimal rounds d HALF_UP to scale and checks that the result has at
// most precision-scale integer digits (ErrDecimalOverflow otherwise), as
// ksqlDB's DecimalUtil.cast. d is not modified.
func FitDecimal(d *apd.Decimal, precision, scale int) (*apd.Decimal, error) {
	out := new(apd.Decimal)
	if _, err := decimalCtx.Quantize(out, d, int32(-scale)); err != nil {
		return nil, ErrDecimalOverflow
	}
	if intDigits(out, scale) > precision-scale {
		return nil, ErrDecimalOverflow
	}
	if out.IsZero() {
		out.Negative = false // BigDecimal has no -0
	}
	return out, nil
}

// FitDecimalExact is FitDecimal without rounding: a value with more
// fractional digits than scale is ErrDecimalRounding, as ksqlDB's
// DecimalUtil.ensureFit, which its deserializers use.
func FitDecimalExact(d *apd.Decimal, precision, scale int) (*apd.Decimal, error) {
	out, err := FitDecimal(d, precision, scale)
	if err != nil {
		return nil, err
	}
	if out.Cmp(d) != 0 {
		return nil, ErrDecimalRounding
	}
	return out, nil
}

// RoundDecimal rounds d to places decimal places with rounding, as
// BigDecimal.setScale(places, mode) (negative places round left of the
// point: -2 gives hundreds), and returns the result written at scale,
// which adds zeros or drops zeros only: ksqlDB's ROUND(x, d) keeps x's
// scale. d is not modified.
func RoundDecimal(d *apd.Decimal, places int, rounding apd.Rounder, scale int) (*apd.Decimal, error) {
	// A DECIMAL has at most 38 digits on either side of the point:
	// rounding beyond 76 places either way gives what 76 places give.
	places = max(-2*MaxDecimalPrecision, min(places, 2*MaxDecimalPrecision))
	rounded := d
	if -int(d.Exponent) > places {
		rounded = new(apd.Decimal)
		// apd's Quantize gives 0 for a value below a tenth of the unit
		// it rounds to, whatever the rounding: right for the halves and
		// for rounding down, wrong for CEIL(0.01). The directed roundings
		// are rounding down plus one unit away from zero when digits
		// were dropped.
		away := rounding == apd.RoundUp || (rounding == apd.RoundCeiling && !d.Negative) || (rounding == apd.RoundFloor && d.Negative)
		c := decimalCtx
		c.Rounding = rounding
		if away || rounding == apd.RoundCeiling || rounding == apd.RoundFloor {
			c.Rounding = apd.RoundDown
		}
		if _, err := c.Quantize(rounded, d, int32(-places)); err != nil {
			return nil, fmt.Errorf("rounding %s to %d places: %w", d, places, err)
		}
		if away && rounded.Cmp(d) != 0 {
			unit := apd.New(1, int32(-places))
			unit.Negative = d.Negative
			if _, err := decimalCtx.Add(rounded, rounded, unit); err != nil {
				return nil, fmt.Errorf("rounding %s to %d places: %w", d, places, err)
			}
		}
	}
	out := new(apd.Decimal)
	if _, err := decimalCtx.Quantize(out, rounded, int32(-scale)); err != nil {
		return nil, fmt.Errorf("writing %s at scale %d: %w", rounded, scale, err)
	}
	if out.IsZero() {
		out.Negative = false // BigDecimal has no -0
	}
	return out, nil
}

// intDigits counts the digits left of the point of d, which has the
// given scale (exponent -scale); 0.5 has none.
func intDigits(d *apd.Decimal, scale int) int {
	n := int(d.NumDigits()) - scale
	if n < 0 || d.IsZero() {
		return 0
	}
	return n
}

// FormatDecimal writes d without exponent and with all its scale, as
// BigDecimal.toPlainString: 3.40, 0.000, 1200.
func FormatDecimal(d *apd.Decimal) string { return d.Text('f') }

// DecimalFloat converts d to the nearest double.
func DecimalFloat(d *apd.Decimal) float64 {
	f, err := d.Float64()
	if err != nil {
		f, _ = strconv.ParseFloat(d.Text('e'), 64)
	}
	return f
}

// DecimalToInt truncates d toward zero, as BigDecimal.longValue does for
// values in range; ok is false when the integer part does not fit int64.
func DecimalToInt(d *apd.Decimal) (int64, bool) {
	var t apd.Decimal
	c := decimalCtx
	c.Rounding = apd.RoundDown
	if _, err := c.Quantize(&t, d, 0); err != nil {
		return 0, false
	}
	n, err := t.Int64()
	return n, err == nil
}

// AsDecimal converts an integer or decimal value to a decimal; doubles go
// through their shortest text. ok is false for other values.
func AsDecimal(v any) (*apd.Decimal, bool) {
	switch x := v.(type) {
	case *apd.Decimal:
		return x, x != nil
	case int32:
		return DecimalFromInt(int64(x)), true
	case int64:
		return DecimalFromInt(x), true
	case float64:
		d, err := DecimalFromFloat(x)
		return d, err == nil
	}
	return nil, false
}

// DecimalTypeOf returns the DECIMAL type an integer type widens to when it
// meets a DECIMAL in arithmetic, as ksqlDB: INT is DECIMAL(10, 0), BIGINT
// DECIMAL(19, 0). A DECIMAL is returned as is.
func DecimalTypeOf(t Type) (Type, bool) {
	switch t.Kind {
	case Integer:
		return DecimalOf(10, 0), true
	case BigInt:
		return DecimalOf(19, 0), true
	case Decimal:
		return t, true
	}
	return Type{}, false
}

// ContainsDecimal reports whether t is or holds a DECIMAL.
func (t Type) ContainsDecimal() bool {
	switch t.Kind {
	case Decimal:
		return true
	case Array, Map:
		return t.Elem.ContainsDecimal()
	case Struct:
		for _, f := range t.Fields {
			if f.Type.ContainsDecimal() {
				return true
			}
		}
	}
	return false
}
