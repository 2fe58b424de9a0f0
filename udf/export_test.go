package udf

// ClosedInstances is how many instances have been closed.
func ClosedInstances() int64 { return closedInstances.Load() }
