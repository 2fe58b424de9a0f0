package planner

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/sluice-sql/sluice/types"
)

// generatedAliasPrefix names the columns of unaliased SELECT expressions:
// KSQL_COL_0, KSQL_COL_1, …
const generatedAliasPrefix = "KSQL_COL"

// numberedName splits a column name ending in _<digits> into its stem and
// number (B_2: B, 2); any other name is its own stem, numbered 0.
var numberedName = regexp.MustCompile(`^(.*?)(?:_(\d+))?$`)

func splitNumbered(name string) (stem string, n int) {
	m := numberedName.FindStringSubmatch(name)
	if m == nil || m[2] == "" {
		return name, 0
	}
	n, err := strconv.Atoi(m[2])
	if err != nil {
		return name, 0
	}
	return m[1], n
}

// aliasGenerator names unaliased SELECT items as ksqlDB does: an
// expression is the next free KSQL_COL_n, a struct field A->B is B, or B_1,
// B_2, … when B is taken, where a name is taken when the source has a
// column of that stem and number (B is B_0) or an earlier item got it.
// Names the statement gives (aliases, column references) are not counted:
// a clash with one is refused as a duplicate.
type aliasGenerator struct {
	used map[string]map[int]bool
	next map[string]int
}

func newAliasGenerator(cols []types.Column) *aliasGenerator {
	g := &aliasGenerator{used: map[string]map[int]bool{}, next: map[string]int{}}
	for _, c := range cols {
		stem, n := splitNumbered(c.Name)
		if g.used[stem] == nil {
			g.used[stem] = map[int]bool{}
		}
		g.used[stem][n] = true
	}
	return g
}

// expression names an unaliased expression that is not a struct field.
func (g *aliasGenerator) expression() string {
	return g.take(generatedAliasPrefix)
}

// field names an unaliased struct field of the given name.
func (g *aliasGenerator) field(name string) string {
	stem, _ := splitNumbered(name)
	return g.take(stem)
}

func (g *aliasGenerator) take(stem string) string {
	i := g.next[stem]
	for g.used[stem][i] {
		i++
	}
	g.next[stem] = i + 1
	if i == 0 && stem != generatedAliasPrefix {
		return stem
	}
	return fmt.Sprintf("%s_%d", stem, i)
}
