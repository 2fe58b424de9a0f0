package udf

// ClosedInstances is how many instances have been closed.
func ClosedInstances() int64 { return closedInstances.Load() }

// IdleJSVMs is how many VMs f's pool holds.
func IdleJSVMs(f *JSFunction) int {
	f.pool.mu.Lock()
	defer f.pool.mu.Unlock()
	return len(f.pool.free)
}
