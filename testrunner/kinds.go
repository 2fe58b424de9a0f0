package testrunner

import (
	"regexp"
	"sort"
	"strings"
)

// Failures are grouped by kind in the report, so that what is left reads
// as a list of gaps rather than of cases.

// deliberate are the cases where Sluice differs from ksqlDB on purpose,
// keyed "file :: case", with why.
var deliberate = map[string]string{
	"windowed-source.json :: Should fail querying windowed table":          "Sluice runs persistent queries over windowed tables (WINDOW_TYPE sources); ksqlDB refuses them.",
	"sum.json :: sum decimal with overflow":                                "A row that takes a DECIMAL SUM past its precision is a bad record in Sluice (counted, logged, dead-lettered; the sum stays) and the query goes on; ksqlDB fails the query.",
	"sum.json :: sum decimal should overflow with cast to lower precision": "A row that takes a DECIMAL SUM past its precision is a bad record in Sluice (counted, logged, dead-lettered; the sum stays) and the query goes on; ksqlDB fails the query.",
}

// testOnlyFunctions are the functions ksqlDB's test suite loads from its
// own test jar; they are not part of ksqlDB and Sluice does not have them.
var testOnlyFunctions = map[string]bool{
	"BAD_UDF": true, "TEST_UDTF": true, "THROWING_UDTF": true, "WHENCONDITION": true, "TEST_UDF": true, "SUM_LIST": true,
}

var unknownFunction = regexp.MustCompile(`Can't find any functions with the name '([A-Z_0-9]+)'`)

// Failure kinds, in the order the report lists them.
const (
	kindDeliberate = "Deliberate differences"
	kindTestOnly   = "Needs ksqlDB's test-only functions"
	kindFunction   = "Functions not implemented"
	kindAccepted   = "Accepted where ksqlDB refuses"
	kindWording    = "Refused, in other words than ksqlDB's"
	kindResults    = "Different results"
	kindOther      = "Failed with an error"
)

var kindOrder = []string{kindDeliberate, kindTestOnly, kindFunction, kindAccepted, kindWording, kindResults, kindOther}

// failKind classifies a failed case.
func failKind(r Result) string {
	if _, ok := deliberate[r.File+" :: "+r.Case]; ok {
		return kindDeliberate
	}
	reason := r.Reason
	if reason == "" && len(r.Diff) > 0 {
		reason = r.Diff[0]
	}
	if m := unknownFunction.FindStringSubmatch(reason); m != nil {
		if testOnlyFunctions[m[1]] {
			return kindTestOnly
		}
		return kindFunction
	}
	switch {
	case strings.Contains(reason, "but every statement succeeded"):
		return kindAccepted
	case strings.HasPrefix(reason, "expected an error"):
		return kindWording
	case len(r.Diff) > 0 && r.Reason == "":
		return kindResults
	}
	return kindOther
}

// groupFailures maps kinds to their failed cases ("file :: case"),
// sorted.
func groupFailures(results []Result) map[string][]Result {
	out := map[string][]Result{}
	for _, r := range results {
		if r.Status == Passed || r.Status == Skipped {
			continue
		}
		k := failKind(r)
		out[k] = append(out[k], r)
	}
	for _, rs := range out {
		sort.Slice(rs, func(i, j int) bool {
			if rs[i].File != rs[j].File {
				return rs[i].File < rs[j].File
			}
			return rs[i].Case < rs[j].Case
		})
	}
	return out
}
