package topicprint

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The parts of ksqlDB's PRINT line:
//
//	rowtime: 2026/12/03 18:00:00.000 Z, key: k, value: v, partition: 0
//
// rowtime is the record's timestamp in UTC, or N/A for none; a missing
// key or value (a tombstone) shows as <null>.
const (
	rowtimePrefix   = "rowtime: "
	keyPrefix       = ", key: "
	valuePrefix     = ", value: "
	partitionPart   = ", partition: "
	rowtimeLayout   = "2006/01/02 15:04:05.000 Z"
	noRowtime       = "N/A"
	nullText        = "<null>"
	keyFormatLine   = "Key format: "
	valueFormatLine = "Value format: "
)

// Record is one printed record: what a PRINT line says.
type Record struct {
	// Rowtime is the timestamp as the line shows it.
	Rowtime   string
	Key       *string
	Value     *string
	Partition int32
}

// FromKafka is the Record a Kafka record prints as.
func FromKafka(r *kgo.Record) Record {
	out := Record{Rowtime: noRowtime, Key: text(r.Key), Value: text(r.Value), Partition: r.Partition}
	if ms := r.Timestamp.UnixMilli(); ms >= 0 {
		out.Rowtime = time.UnixMilli(ms).UTC().Format(rowtimeLayout)
	}
	return out
}

func text(b []byte) *string {
	if b == nil {
		return nil
	}
	s := string(b)
	return &s
}

// Line is a record's PRINT line, without the newline.
func Line(r Record) string {
	return rowtimePrefix + r.Rowtime + keyPrefix + orNull(r.Key) + valuePrefix + orNull(r.Value) +
		partitionPart + strconv.Itoa(int(r.Partition))
}

func orNull(s *string) string {
	if s == nil {
		return nullText
	}
	return *s
}

// ParseLine reads a PRINT line back. ok is false for the lines a PRINT
// response carries besides records: blank keep-alive lines and ksqlDB's
// "Key format: …" and "Value format: …" lines. Any other line is an error
// (ksqlDB ends a failed PRINT with the error's message as a line). A key
// that itself contains ", value: " is read up to its first occurrence.
func ParseLine(line string) (rec Record, ok bool, err error) {
	line = strings.TrimRight(line, "\r\n")
	if strings.TrimSpace(line) == "" || strings.HasPrefix(line, keyFormatLine) || strings.HasPrefix(line, valueFormatLine) {
		return Record{}, false, nil
	}
	rest, found := strings.CutPrefix(line, rowtimePrefix)
	if !found {
		return Record{}, false, fmt.Errorf("PRINT: %s", line)
	}
	rowtime, rest, found1 := strings.Cut(rest, keyPrefix)
	key, rest, found2 := strings.Cut(rest, valuePrefix)
	i := strings.LastIndex(rest, partitionPart)
	if !found1 || !found2 || i < 0 {
		return Record{}, false, fmt.Errorf("PRINT: not a record line: %q", line)
	}
	p, perr := strconv.ParseInt(rest[i+len(partitionPart):], 10, 32)
	if perr != nil {
		return Record{}, false, fmt.Errorf("PRINT: not a record line: %q", line)
	}
	return Record{Rowtime: rowtime, Key: fromText(key), Value: fromText(rest[:i]), Partition: int32(p)}, true, nil
}

func fromText(s string) *string {
	if s == nullText {
		return nil
	}
	return &s
}
