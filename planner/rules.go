package planner

import "slices"

// A rule is one named rewrite of a query's plan. The list rules gives
// the order they run in; each says whether it changed the plan, and
// Query.Rules (what EXPLAIN prints) names those that did.
//
// To add a rule: write it in its own file, rule_<name>.go, as a method
// of *planning returning (changed, err); give it its own test; add it to
// rules at the stage where what it reads exists. A rule decides; the
// plan it leaves says what was decided: an onLogical rule's decision is
// a node or field of the logical plan the builder reads, an onPlan
// rule's is in the topology too (exec instantiates nodes and recognises
// no plan shapes). An onLogical rule may rewrite any node the builder
// reads (lower.go): the builder compiles what the plan says. A rule
// changed the plan when it inserted, replaced or annotated a node; a
// rule that only checks never did.
type rule struct {
	name  string
	stage ruleStage
	apply func(p *planning) (changed bool, err error)
}

// ruleStage says what a rule works on.
type ruleStage int

const (
	// onStatement rules rewrite the SELECT before it is bound.
	onStatement ruleStage = iota
	// onLogical rules decide on the logical plan the bind pass made,
	// before the topology is built, and may rewrite any of its nodes:
	// the builder compiles what the plan says.
	onLogical
	// onPlan rules run once the topology is built, and change both it and
	// the logical plan.
	onPlan
)

// rules run in this order.
var rules = []rule{
	{name: "magic-timestamps", stage: onStatement, apply: (*planning).magicTimestampRule},
	{name: "repartition", stage: onLogical, apply: (*planning).repartitionRule},
	{name: "co-partitioning", stage: onLogical, apply: (*planning).coPartitioningRule},
	{name: "join-column-pruning", stage: onLogical, apply: (*planning).joinColumnPruningRule},
	{name: "constant-folding", stage: onLogical, apply: (*planning).constantFoldingRule},
	{name: "predicate-pushdown", stage: onLogical, apply: (*planning).predicatePushdownRule},
	{name: "column-pruning", stage: onPlan, apply: (*planning).columnPruningRule},
	{name: "json-copy", stage: onPlan, apply: (*planning).jsonCopyRule},
	{name: "key-lookup", stage: onPlan, apply: (*planning).keyLookupRule},
	{name: "key-range", stage: onPlan, apply: (*planning).keyRangeRule},
	{name: "scalable-push", stage: onPlan, apply: (*planning).scalablePushRule},
}

// runRules applies the rules of one stage in order, recording those that
// changed the plan.
func (p *planning) runRules(stage ruleStage) error {
	for _, r := range rules {
		if r.stage != stage || slices.Contains(p.opts.SkipRules, r.name) {
			continue
		}
		changed, err := r.apply(p)
		if err != nil {
			return err
		}
		if changed {
			p.q.Rules = append(p.q.Rules, r.name)
		}
	}
	return nil
}
