package planner

import (
	"strings"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/planner/logical"
	"github.com/sluice-sql/sluice/types"
)

// jsonCopyRule lets a query that only rearranges JSON columns copy them:
// a stream read straight into an optional filter, a projection and a
// sink, JSON values on both sides (SELECT *, SELECT A, B AS C, SELECT A,
// B * 2 AS D … WHERE …). The task then copies the text of the selected
// columns unchanged (format.JSONCopy) and the key's bytes when they
// carry over, and converts only what the filter and the computed columns
// read; records the copy cannot reproduce exactly go through the chain
// (exec/copy.go). The rule sets the sub-topology's exec.JSONCopy and
// puts a logical.JSONCopy above the chain it stands for.
func (p *planning) jsonCopyRule() (bool, error) {
	sink, ok := p.q.Logical.(*logical.Sink)
	if !ok || sink.Table {
		return false, nil
	}
	proj, ok := sink.Input.(*logical.Project)
	if !ok {
		return false, nil
	}
	below := proj.Input
	if f, ok := below.(*logical.Filter); ok {
		below = f.Input
	}
	if src, ok := below.(*logical.Source); !ok || src.Table {
		return false, nil
	}
	spec := p.chainCopy()
	if spec == nil {
		return false, nil
	}
	p.final.sub.Copy = spec
	copied := 0
	for _, from := range spec.From {
		if from >= 0 {
			copied++
		}
	}
	sink.Input = &logical.JSONCopy{Copied: copied, Columns: len(spec.From), Input: proj}
	return true, nil
}

// chainCopy works out the copy of the final chain (filter, projection,
// sink), or nil when its formats, key or event time need the chain.
func (p *planning) chainCopy() *exec.JSONCopy {
	chain := p.final
	if chain.sub == nil || chain.project == nil || chain.sink == nil {
		return nil
	}
	sub, proj, sink := chain.sub, chain.project, chain.sink
	src := sub.Source
	if len(sub.Sides) > 0 || src != p.spec || src.Window != exec.NotWindowed || src.Dedupe || src.Table || len(src.HeaderCols) > 0 || src.Enveloped() {
		return nil
	}
	// The chain must be exactly these nodes: nothing else (a
	// materialization, a flat-map) may run between them.
	want := 2
	if chain.filter != nil {
		want = 3
	}
	if len(sub.Nodes) != want {
		return nil
	}
	if chain.filter != nil && chain.filter.TombstoneOnReject {
		return nil
	}
	if proj.TombstoneKeys > 0 || len(proj.Inputs) != len(proj.Exprs) {
		return nil
	}
	if sink.Internal || sink.Timestamp != nil || sink.Window != exec.NotWindowed || sink.ValueProps.Envelope != "" {
		return nil
	}
	if !strings.EqualFold(src.ValueFormat, format.JSON) || !strings.EqualFold(sink.ValueFormat, format.JSON) {
		return nil
	}
	nk, nv := len(src.KeyCols), len(src.ValueCols)
	rowPos := func(out int) int {
		if out < 0 || out >= len(proj.Inputs) {
			return -1
		}
		return proj.Inputs[out]
	}
	c := &exec.JSONCopy{Sink: sink, TsCol: -1, From: make([]int, len(sink.ValueIdx)), Computed: make([]expr.Eval, len(sink.ValueIdx))}
	computed := false
	for o, out := range sink.ValueIdx {
		if in := rowPos(out); in >= nk && in < nk+nv {
			c.From[o] = in - nk
			continue
		}
		// A key, a pseudo-column or an expression: computed.
		if out < 0 || out >= len(proj.Exprs) {
			return nil
		}
		c.From[o], c.Computed[o], computed = -1, proj.Exprs[out], true
	}
	if !computed {
		c.Computed = nil
	}
	if tc := src.TimestampCol; tc >= 0 {
		// Event time from a value column: an integer one, which the copy
		// reads and checks as the chain would; a STRING with a format is
		// left to the chain.
		j := tc - nk
		if j < 0 || j >= nv || (src.Needed != nil && !src.Needed[j]) {
			return nil
		}
		if k := src.ValueCols[j].Type.Kind; k != types.BigInt && k != types.Integer {
			return nil
		}
		c.TsCol = j
	}
	switch {
	case nk == 0 && len(sink.KeyIdx) == 0:
		// Without key columns the chain writes what the sink's key format
		// makes of none: no key, for every format.
		kc, err := format.NewKeyCodec(sink.KeyFormat, nil, sink.KeyProps)
		if err != nil {
			return nil
		}
		if k, err := kc.Encode([]any{}); err != nil || k != nil {
			return nil
		}
	case nk == 1 && len(sink.KeyIdx) == 1 && rowPos(sink.KeyIdx[0]) == 0 &&
		strings.EqualFold(src.KeyFormat, format.Kafka) && strings.EqualFold(sink.KeyFormat, format.Kafka) &&
		src.KeyCols[0].Type.Equal(sink.KeyCols[0].Type):
		c.KeyType = &src.KeyCols[0].Type
	default:
		return nil
	}
	if format.NewJSONCopy(src.ValueCols, src.ValueProps, sink.ValueCols, sink.ValueProps, c.From, src.Needed) == nil {
		return nil
	}
	if chain.filter != nil {
		c.Filter = chain.filter.Pred
	}
	if chain.filter != nil || computed {
		// Only what the filter and the computed columns read is
		// converted: the columns their compilation resolved.
		evaluated := make([]bool, nv)
		for j := range evaluated {
			evaluated[j] = chain.evaluated[nk+j]
		}
		src.Evaluated = evaluated
	}
	return c
}
