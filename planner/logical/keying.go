package logical

// Keying is how a step's rows are keyed and spread over partitions: what
// the planner's repartition rule reads to decide where rows must be
// re-keyed, and its co-partitioning rule to check that a join's inputs
// meet in one task. The planner states it for sources when it binds the
// query; the repartition rule derives it for the steps it decides on
// (a join's result, a repartition). It is not printed.
type Keying struct {
	// Key names the columns that hold the rows' key, in order.
	Key []string
	// Format is the key format, which decides how a key hashes to a
	// partition.
	Format     string
	Partitions int32
	Windowed   bool
	Table      bool
}

// KeyingOf is the keying of the rows a step gives: steps that keep their
// input's rows' keys (filter, flat-map, window) pass it through; a step
// that computes other rows (project, aggregate, …) has none here.
func KeyingOf(n Node) Keying {
	switch x := n.(type) {
	case *Source:
		return x.Keying
	case *Join:
		return x.Keying
	case *Repartition:
		return x.Keying
	case *Filter:
		return KeyingOf(x.Input)
	case *FlatMap:
		return KeyingOf(x.Input)
	case *Window:
		return KeyingOf(x.Input)
	}
	return Keying{}
}
