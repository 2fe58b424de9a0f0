package planner

// magicTimestampRule reads the string literals a WHERE clause compares
// ROWTIME, WINDOWSTART or WINDOWEND with as timestamps
// (magicTimestamps), before anything compiles the clause.
func (p *planning) magicTimestampRule() (bool, error) {
	if p.sel.Where == nil {
		return false, nil
	}
	where, err := magicTimestamps(p.sel.Where)
	if err != nil {
		return false, err
	}
	if where.String() == p.sel.Where.String() {
		return false, nil
	}
	// The statement stays as written: the plan reads a copy.
	rewritten := *p.sel
	rewritten.Where = where
	p.sel = &rewritten
	return true, nil
}
