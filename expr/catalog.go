package expr

import (
	"sort"
	"strings"
)

// FunctionInfo describes a function for SHOW FUNCTIONS and DESCRIBE
// FUNCTION.
type FunctionInfo struct {
	Name     string
	Type     string // SCALAR, AGGREGATE or TABLE
	Category string
	// Description is a sentence on what it computes (may be empty for
	// scalars whose name says it).
	Description string
}

// functionCategories groups the functions as ksqlDB's reference does.
var functionCategories = map[string][]string{
	"STRING": {"CHR", "CONCAT", "CONCAT_WS", "ELT", "ENCODE", "FIELD", "FROM_BYTES", "INITCAP", "INSTR", "LCASE", "LEN",
		"LPAD", "LTRIM", "MASK", "MASK_KEEP_LEFT", "MASK_KEEP_RIGHT", "MASK_LEFT", "MASK_RIGHT", "REGEXP_EXTRACT",
		"REGEXP_EXTRACT_ALL", "REGEXP_REPLACE", "REGEXP_SPLIT_TO_ARRAY", "REPLACE", "RPAD", "RTRIM", "SPLIT", "SPLIT_TO_MAP",
		"SUBSTRING", "TO_BYTES", "TRIM", "UCASE", "UUID", "MD5", "INT_FROM_BYTES", "BIGINT_FROM_BYTES", "DOUBLE_FROM_BYTES"},
	"MATHEMATICAL": {"ABS", "ACOS", "ASIN", "ATAN", "ATAN2", "CBRT", "CEIL", "COS", "COSH", "COT", "DEGREES", "EXP", "FLOOR", "GEO_DISTANCE",
		"GENERATE_SERIES", "GREATEST", "LEAST", "LN", "LOG", "PI", "POWER", "RADIANS", "RANDOM", "ROUND", "SIGN", "SIN",
		"SINH", "SQRT", "TAN", "TANH", "TRUNC"},
	"DATE / TIME": {"CONVERT_TZ", "DATEADD", "DATESUB", "DATETOSTRING", "FORMAT_DATE", "FORMAT_TIME", "FORMAT_TIMESTAMP",
		"FROM_DAYS", "FROM_UNIXTIME", "PARSE_DATE", "PARSE_TIME", "PARSE_TIMESTAMP", "STRINGTODATE", "STRINGTOTIMESTAMP",
		"TIMEADD", "TIMESTAMPADD", "TIMESTAMPSUB", "TIMESTAMPTOSTRING", "TIMESUB", "UNIX_DATE", "UNIX_TIMESTAMP"},
	"CONDITIONAL": {"COALESCE", "IFNULL", "NULLIF"},
	"OTHER":       {"AS_VALUE"},
	"JSON": {"EXTRACTJSONFIELD", "IS_JSON_STRING", "JSON_ARRAY_CONTAINS", "JSON_ARRAY_LENGTH", "JSON_CONCAT", "JSON_KEYS",
		"JSON_ITEMS", "JSON_RECORDS", "TO_JSON_STRING"},
	"ARRAY": {"ARRAY_CONCAT", "ARRAY_CONTAINS", "ARRAY_DISTINCT", "ARRAY_EXCEPT", "ARRAY_INTERSECT", "ARRAY_JOIN",
		"ARRAY_LENGTH", "ARRAY_MAX", "ARRAY_MIN", "ARRAY_REMOVE", "ARRAY_SORT", "ARRAY_UNION", "SLICE", "ENTRIES"},
	"MAP": {"AS_MAP", "MAP_KEYS", "MAP_UNION", "MAP_VALUES"},
	"URL": {"URL_DECODE_PARAM", "URL_ENCODE_PARAM", "URL_EXTRACT_FRAGMENT", "URL_EXTRACT_HOST", "URL_EXTRACT_PARAMETER",
		"URL_EXTRACT_PATH", "URL_EXTRACT_PORT", "URL_EXTRACT_PROTOCOL", "URL_EXTRACT_QUERY"},
}

// aggregateDescriptions says what each aggregate computes.
var aggregateDescriptions = map[string]string{
	"AVG":                "The average of the non-NULL values.",
	"COLLECT_LIST":       "An ARRAY of the values, in arrival order (at most ksql.functions.collect_list.limit, default 1000).",
	"COLLECT_SET":        "An ARRAY of the distinct values, NULL counted once (at most ksql.functions.collect_set.limit, default 1000); streams only.",
	"ATTR":               "The one value of the group, or NULL when its rows hold more than one.",
	"CORRELATION":        "Pearson's correlation coefficient of two numeric columns.",
	"COUNT":              "The number of rows, or with a column, of its non-NULL values.",
	"COUNT_DISTINCT":     "The number of distinct non-NULL values.",
	"EARLIEST_BY_OFFSET": "The value of the earliest row by offset (or the n earliest, as an ARRAY).",
	"HISTOGRAM":          "A MAP from each distinct STRING value to its count (at most 1000 values).",
	"LATEST_BY_OFFSET":   "The value of the latest row by offset (or the n latest, as an ARRAY).",
	"MAX":                "The largest non-NULL value.",
	"MIN":                "The smallest non-NULL value.",
	"STDDEV_SAMP":        "The sample variance of the non-NULL values (ksqlDB's STDDEV_SAMP; use STDDEV_SAMPLE for the deviation).",
	"STDDEV_SAMPLE":      "The sample standard deviation of the non-NULL values.",
	"SUM":                "The sum of the non-NULL values.",
	"SUM_LIST":           "The sum of every non-NULL element of an ARRAY of numbers, over the rows.",
	"TOPK":               "An ARRAY of the k largest values.",
	"TOPKDISTINCT":       "An ARRAY of the k largest distinct values.",
}

// Functions lists every scalar, aggregate and table function, sorted by
// name.
func Functions() []FunctionInfo {
	category := map[string]string{}
	for c, names := range functionCategories {
		for _, n := range names {
			category[n] = c
		}
	}
	var out []FunctionInfo
	for name, s := range scalars {
		out = append(out, FunctionInfo{Name: name, Type: "SCALAR", Category: category[name], Description: s.doc})
	}
	for name, doc := range lambdaFunctions {
		out = append(out, FunctionInfo{Name: name, Type: "SCALAR", Category: "LAMBDA", Description: doc})
	}
	for name := range aggregates {
		out = append(out, FunctionInfo{Name: name, Type: "AGGREGATE", Category: "AGGREGATE", Description: aggregateDescriptions[name]})
	}
	for name, f := range tableFunctions {
		out = append(out, FunctionInfo{Name: name, Type: "TABLE", Category: "TABLE", Description: f.doc})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// LookupFunction describes one function by name (any case).
func LookupFunction(name string) (FunctionInfo, bool) {
	name = strings.ToUpper(name)
	for _, f := range Functions() {
		if f.Name == name {
			return f, true
		}
	}
	return FunctionInfo{}, false
}
