package exec

// Record is a Kafka record as the engine sees it, independent of the
// client library.
type Record struct {
	Topic     string
	Partition int32
	Offset    int64
	Key       []byte
	Value     []byte
	Timestamp int64
	Headers   []Header
}

// Header is a Kafka record header.
type Header struct {
	Key   string
	Value []byte
}

// Row is one row flowing through an operator chain. Cols is indexed by
// positions resolved at plan time. Ts is the row's event time in epoch
// milliseconds. Tombstone marks a table row deletion: the sink writes a
// record with a null value.
type Row struct {
	Cols      []any
	Ts        int64
	Tombstone bool
	// NullKey marks a row read from a record with a null key (not a key
	// whose columns are null). While the key passes through unchanged the
	// sink writes a null key again, as ksqlDB carries its null key object
	// through; operators that compute a new key build rows without it.
	NullKey bool
	// Old is the previous result of the same aggregate key, when the
	// aggregate was asked to keep it (nil for a new key). A HAVING filter
	// needs it to know whether a rejected row used to be in the table.
	Old []any
}

// Output receives the records a task produces. The Kafka runner produces
// them asynchronously; the memory runner routes them to other tasks and
// collects them. Produce must not keep rec after it returns: a task hands
// every record in the same Record. The bytes it points to (key, value,
// headers) stay as they are and may be kept.
type Output interface {
	Produce(rec *Record)
}
