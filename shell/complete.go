package shell

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/parser"
)

// keywords are the words of Sluice's dialect that completion offers
// outside a WITH clause.
var keywords = strings.Fields(`
	SELECT FROM WHERE GROUP BY HAVING EMIT CHANGES FINAL LIMIT PARTITION
	CREATE OR REPLACE STREAM TABLE SOURCE AS WITH INSERT INTO VALUES
	SHOW LIST STREAMS TABLES QUERIES TOPICS PROPERTIES FUNCTIONS TYPES TYPE
	DESCRIBE EXTENDED EXPLAIN DROP IF EXISTS DELETE TOPIC TERMINATE ALL
	SINK CONNECTOR CONNECTORS PLUGINS
	PRINT BEGINNING INTERVAL SET UNSET RUN SCRIPT SPOOL
	WINDOW TUMBLING HOPPING SESSION SLIDING SIZE ADVANCE GRACE PERIOD RETENTION
	JOIN LEFT RIGHT FULL OUTER INNER ON WITHIN
	AND NOT NULL IS IN BETWEEN LIKE CASE WHEN THEN ELSE END CAST TRUE FALSE
	KEY PRIMARY WINDOWSTART WINDOWEND ROWTIME ROWPARTITION ROWOFFSET
	BOOLEAN INT INTEGER BIGINT DOUBLE DECIMAL VARCHAR STRING BYTES ARRAY MAP STRUCT TIMESTAMP DATE TIME
	MILLISECONDS SECONDS MINUTES HOURS DAYS`)

// withProperties are the properties of a WITH ( … ) clause, the only
// words completion offers inside one.
var withProperties = strings.Fields(`
	KAFKA_TOPIC KEY_FORMAT VALUE_FORMAT FORMAT PARTITIONS REPLICAS WRAP_SINGLE_VALUE
	TIMESTAMP TIMESTAMP_FORMAT ERROR_TOPIC LATE_TOPIC IDLE_TIMEOUT`)

// propertyNames are the properties SET and UNSET take: the engine's
// property table.
var propertyNames = func() []string {
	var names []string
	for _, p := range engine.Properties() {
		names = append(names, p.Name)
	}
	return names
}()

// showWhat follows SHOW and LIST.
var showWhat = []string{"STREAMS", "TABLES", "QUERIES", "TOPICS", "PROPERTIES", "CONNECTORS"}

var (
	setRE   = regexp.MustCompile(`(?i)^\s*(?:UN)?SET\s+'([^']*)$`)
	printRE = regexp.MustCompile(`(?i)^\s*PRINT\s+'?([A-Za-z0-9_.\-]*)$`)
	withRE  = regexp.MustCompile(`(?i)\bWITH\s*\(`)
)

// sourceContext lists the words after which only a stream or table name
// fits.
var sourceContext = map[string]bool{"FROM": true, "JOIN": true, "INTO": true, "DESCRIBE": true, "EXTENDED": false, "STREAM": false, "TABLE": false}

// complete returns what the word that ends line may become (each
// candidate whole, with what follows it: a space after a word, `(` after
// a function, the closing quote of a property name) and that word as
// typed. statement is the text of the statement typed so far before this
// line, for context that started on an earlier line. names come from the
// backend's catalog.
//
// Keywords and functions follow the case the user types. Catalog names
// keep the catalog's: an unquoted identifier means its upper-case form,
// so a name that is not upper case (created quoted) completes in
// backquotes, and after an opening quote names complete as written.
func complete(statement, line string, names func() Names) (words []string, typed string) {
	full := statement + line
	if m := setRE.FindStringSubmatch(full); m != nil {
		return suffixed(matching(propertyNames, m[1], false), "'"), m[1]
	}
	if m := printRE.FindStringSubmatch(full); m != nil {
		return suffixed(matching(names().Topics, m[1], false), " "), m[1]
	}
	word := trailingWord(line)
	before := full[:len(full)-len(word)]
	prev := strings.ToUpper(previousWord(before))
	lower := isLower(word)
	if q := openQuote(before); q != "" {
		cands := names().Sources
		if !sourceContext[prev] && !dropped(before) {
			cands = append(cands, names().Columns...)
		}
		var out []string
		for _, c := range cands {
			if strings.HasPrefix(c, word) && len(c) > len(word) {
				out = append(out, strings.ReplaceAll(c, q, q+q)+q+" ")
			}
		}
		return sortedUnique(out), word
	}
	switch {
	case prev == "SHOW" || prev == "LIST":
		return suffixed(matching(showWhat, word, lower), " "), word
	case sourceContext[prev] || dropped(before):
		return suffixed(catalogMatching(names().Sources, word), " "), word
	case word == "":
		// Every word of the dialect is too many to list for a blank.
		return nil, word
	case inWith(before):
		return suffixed(matching(withProperties, word, lower), " "), word
	}
	n := names()
	out := suffixed(matching(keywords, word, lower), " ")
	out = append(out, suffixed(catalogMatching(append(append([]string{}, n.Sources...), n.Columns...), word), " ")...)
	out = append(out, suffixed(matching(n.Functions, word, lower), "(")...)
	return sortedUnique(out), word
}

// inWith reports an open WITH ( … ) clause before the word: a WITH
// followed by a parenthesis that no later one closed. Parentheses inside
// quotes do not count.
func inWith(before string) bool {
	locs := withRE.FindAllStringIndex(before, -1)
	if len(locs) == 0 {
		return false
	}
	depth := 0
	var quote rune
	for _, r := range before[locs[len(locs)-1][1]:] {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"' || r == '`':
			quote = r
		case r == '(':
			depth++
		case r == ')':
			depth--
		}
	}
	return depth >= 0 && quote == 0
}

// openQuote returns the identifier quote (` or ") that opens the word
// being typed, if one does.
func openQuote(before string) string {
	if strings.HasSuffix(before, "`") || strings.HasSuffix(before, `"`) {
		return before[len(before)-1:]
	}
	return ""
}

// dropped reports a DROP STREAM|TABLE [IF EXISTS] before the word.
func dropped(before string) bool {
	f := strings.Fields(strings.ToUpper(before))
	if len(f) >= 2 && f[0] == "DROP" && (f[1] == "STREAM" || f[1] == "TABLE") {
		return len(f) == 2 || (len(f) == 4 && f[2] == "IF" && f[3] == "EXISTS")
	}
	return false
}

func trailingWord(s string) string {
	i := len(s)
	for i > 0 {
		c := rune(s[i-1])
		if !(c == '_' || unicode.IsLetter(c) || unicode.IsDigit(c)) || c > unicode.MaxASCII {
			break
		}
		i--
	}
	return s[i:]
}

func previousWord(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	return f[len(f)-1]
}

func isLower(w string) bool {
	return w != "" && strings.ToLower(w) == w && strings.ToUpper(w) != w
}

// matching keeps the candidates longer than prefix that start with it
// (ignoring case), lower-cased when the user types lower case (keywords
// and function names are case-insensitive).
func matching(cands []string, prefix string, lower bool) []string {
	var out []string
	for _, c := range cands {
		if lower {
			c = strings.ToLower(c)
		}
		if len(c) > len(prefix) && strings.EqualFold(c[:len(prefix)], prefix) {
			out = append(out, c)
		}
	}
	return sortedUnique(out)
}

// catalogMatching keeps the catalog names that start with prefix
// (ignoring case), each written as SQL that names it (parser.Ident).
func catalogMatching(names []string, prefix string) []string {
	var out []string
	for _, n := range names {
		if len(n) > len(prefix) && strings.EqualFold(n[:len(prefix)], prefix) {
			out = append(out, parser.Ident(n))
		}
	}
	return sortedUnique(out)
}

func suffixed(words []string, suffix string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = w + suffix
	}
	return out
}

func sortedUnique(s []string) []string {
	sort.Strings(s)
	return slices.Compact(s)
}

// rests turns complete's whole words into what readline appends to the
// typed word: each word's remainder after it (after the opening quote
// of a backquoted name). A word that does not continue typed (its case
// differs, or it opens with a quote) is fixed up after readline wrote
// its remainder (completerAdapter.OnChange).
func rests(words []string, typed string) []string {
	t := []rune(typed)
	out := make([]string, 0, len(words))
	for _, w := range words {
		r := []rune(w)
		if len(r) > 0 && r[0] == '`' {
			r = r[1:]
		}
		if len(r) < len(t) || !strings.EqualFold(string(r[:len(t)]), typed) {
			continue
		}
		out = append(out, string(r[len(t):]))
	}
	return out
}
