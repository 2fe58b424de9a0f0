package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// result is one entry of results.json: a measured value and its target.
type result struct {
	Value  float64 `json:"value"`
	Target float64 `json:"target"`
	// unmeasured marks a key the run meant to write but could not
	// measure (a contender failed its output check): mergeResults removes
	// it, so that no value of an earlier run stands as this one's.
	unmeasured bool
}

// mergeResults writes entries into the JSON object in path, keeping the
// keys other benchmarks wrote there and removing the unmeasured ones.
func mergeResults(path string, entries map[string]result) error {
	all := map[string]json.RawMessage{}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	default:
		if err := json.Unmarshal(b, &all); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	for k, v := range entries {
		if v.unmeasured {
			delete(all, k)
			continue
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return err
		}
		all[k] = raw
	}
	out, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(out, '\n'), 0o644)
}
