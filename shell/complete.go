package shell

import (
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// keywords are the words of Sluice's dialect that completion offers.
var keywords = strings.Fields(`
	SELECT FROM WHERE GROUP BY HAVING EMIT CHANGES FINAL LIMIT PARTITION
	CREATE OR REPLACE STREAM TABLE SOURCE AS WITH INSERT INTO VALUES
	SHOW LIST STREAMS TABLES QUERIES TOPICS PROPERTIES FUNCTIONS TYPES TYPE
	DESCRIBE EXTENDED EXPLAIN DROP IF EXISTS DELETE TOPIC TERMINATE ALL
	PRINT BEGINNING INTERVAL SET UNSET RUN SCRIPT SPOOL
	WINDOW TUMBLING HOPPING SESSION SLIDING SIZE ADVANCE GRACE PERIOD RETENTION
	JOIN LEFT RIGHT FULL OUTER INNER ON WITHIN
	AND NOT NULL IS IN BETWEEN LIKE CASE WHEN THEN ELSE END CAST TRUE FALSE
	KEY PRIMARY WINDOWSTART WINDOWEND ROWTIME ROWPARTITION ROWOFFSET
	BOOLEAN INT INTEGER BIGINT DOUBLE DECIMAL VARCHAR STRING BYTES ARRAY MAP STRUCT TIMESTAMP DATE TIME
	MILLISECONDS SECONDS MINUTES HOURS DAYS
	KAFKA_TOPIC KEY_FORMAT VALUE_FORMAT FORMAT PARTITIONS REPLICAS WRAP_SINGLE_VALUE
	TIMESTAMP_FORMAT ERROR_TOPIC LATE_TOPIC IDLE_TIMEOUT`)

// propertyNames are the session properties SET and UNSET take.
var propertyNames = []string{
	"auto.offset.reset", "commit.interval.ms", "ksql.timestamp.throw.on.invalid", "processing.guarantee",
	"sluice.compat", "sluice.idle.timeout", "sluice.state.min.free.bytes", "sluice.table.retention",
}

// showWhat follows SHOW and LIST.
var showWhat = []string{"STREAMS", "TABLES", "QUERIES", "TOPICS", "PROPERTIES"}

var (
	setRE   = regexp.MustCompile(`(?i)^\s*(?:UN)?SET\s+'([^']*)$`)
	printRE = regexp.MustCompile(`(?i)^\s*PRINT\s+'?([A-Za-z0-9_.\-]*)$`)
)

// sourceContext lists the words after which only a stream or table name
// fits.
var sourceContext = map[string]bool{"FROM": true, "JOIN": true, "INTO": true, "DESCRIBE": true, "EXTENDED": false, "STREAM": false, "TABLE": false}

// complete returns the completions of the word that ends line: each
// candidate's remainder after that word, and the word's length in runes.
// statement is the text of the statement typed so far before this line,
// for context that started on an earlier line. names come from the
// backend's catalog.
func complete(statement, line string, names func() Names) (rest []string, wordLen int) {
	full := statement + line
	if m := setRE.FindStringSubmatch(full); m != nil {
		return withRest(m[1], filter(propertyNames, m[1], false), "'")
	}
	if m := printRE.FindStringSubmatch(full); m != nil {
		return withRest(m[1], filter(names().Topics, m[1], false), " ")
	}
	word := trailingWord(line)
	prev := strings.ToUpper(previousWord(full[:len(full)-len(word)]))
	lower := isLower(word)
	switch {
	case prev == "SHOW" || prev == "LIST":
		return withRest(word, filter(showWhat, word, lower), " ")
	case sourceContext[prev] || dropped(full[:len(full)-len(word)]):
		return withRest(word, filter(names().Sources, word, lower), " ")
	case word == "":
		// Every word of the dialect is too many to list for a blank.
		return nil, 0
	}
	n := names()
	var cands []string
	cands = append(cands, keywords...)
	cands = append(cands, n.Sources...)
	cands = append(cands, n.Columns...)
	words, wl := withRest(word, filter(cands, word, lower), " ")
	fns, _ := withRest(word, filter(n.Functions, word, lower), "(")
	all := append(words, fns...)
	sort.Strings(all)
	return all, wl
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

// filter keeps the candidates starting with prefix (ignoring case),
// sorted and deduplicated, lower-cased when the user types lower case
// (identifiers are case-insensitive unless quoted).
func filter(cands []string, prefix string, lower bool) []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range cands {
		if lower {
			c = strings.ToLower(c)
		}
		if len(c) > len(prefix) && strings.EqualFold(c[:len(prefix)], prefix) && !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}

// withRest cuts the typed prefix off each candidate and ends it with
// suffix (a space after a word, `(` after a function, the closing quote
// of a property name).
func withRest(prefix string, cands []string, suffix string) ([]string, int) {
	out := make([]string, len(cands))
	for i, c := range cands {
		out[i] = c[len(prefix):] + suffix
	}
	return out, len([]rune(prefix))
}
