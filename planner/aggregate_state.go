package planner

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/types"
)

// checkStateType rejects an aggregate whose accumulator type the source's
// value format cannot carry. ksqlDB writes aggregation state in the
// source's value format, so it refuses AVG (a STRUCT) or TOPK (an ARRAY)
// over DELIMITED input; Sluice keeps state in its own encoding and could
// run them, but accepting a query ksqlDB rejects would make the dialects
// drift apart.
//
// NONE is skipped: it carries no value columns at all, so the check would
// refuse even COUNT(*), which is a different question from this one.
func checkStateType(src *Source, agg *expr.Aggregate) error {
	if strings.EqualFold(src.ValueFormat, "NONE") {
		return nil
	}
	t := agg.StateType
	if t.Kind == types.Unknown {
		t = agg.ResultType
	}
	_, err := format.NewValueCodec(src.ValueFormat, []types.Column{{Name: agg.Name, Type: t}}, src.ValueProps)
	if errors.Is(err, format.ErrUnsupported) {
		return fmt.Errorf("%w: One of the functions used in the statement has an intermediate type that the value format can not handle. "+
			"Please remove the function or change the format. (%s keeps %s, which %s cannot carry)", ErrUnsupported, agg.Name, t, strings.ToUpper(src.ValueFormat))
	}
	return nil
}
