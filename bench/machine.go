package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
)

// machine describes where the run happened, for the report.
func machine() string {
	model := "unknown CPU"
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	mem := statusMemTotal()
	return fmt.Sprintf("%d CPUs (GOMAXPROCS %d), %s, %s, %s %s/%s", runtime.NumCPU(), runtime.GOMAXPROCS(0), model, mem, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func statusMemTotal() string {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return "? RAM"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var kb int64
		if _, err := fmt.Sscanf(sc.Text(), "MemTotal: %d kB", &kb); err == nil {
			return fmt.Sprintf("%.1f GiB RAM", float64(kb)/(1<<20))
		}
	}
	return "? RAM"
}
