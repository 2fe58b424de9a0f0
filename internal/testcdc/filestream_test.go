package testcdc

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestFileStreamSink shows the worker's other plugin works: Kafka's
// FileStreamSink connector writes a topic's values to a file, one a line, in
// offset order. (connect-file must match the worker's version; a mismatch
// lists the plugin but fails every connector.)
func TestFileStreamSink(t *testing.T) {
	Require(t)
	brokers := testkafka.Brokers(t)
	connect := StartConnect(t, brokers)

	topic := testkafka.Name(t, "lines")
	testkafka.CreateTopic(t, brokers, topic, 1)
	testkafka.Produce(t, brokers,
		&kgo.Record{Topic: topic, Value: []byte(`{"id":1,"owner":"ann"}`)},
		&kgo.Record{Topic: topic, Value: []byte(`{"id":2,"owner":"bob"}`)},
		&kgo.Record{Topic: topic, Value: []byte(`plain text`)},
	)
	file := filepath.Join(t.TempDir(), "lines.txt")
	name := "file_" + topic
	connect.CreateConnector(t, name, map[string]string{
		"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
		"topics":          topic,
		"file":            file,
		// The values are written as they are, not parsed as JSON.
		"key.converter":   "org.apache.kafka.connect.storage.StringConverter",
		"value.converter": "org.apache.kafka.connect.storage.StringConverter",
	})
	connect.AwaitRunning(t, name)

	want := "{\"id\":1,\"owner\":\"ann\"}\n{\"id\":2,\"owner\":\"bob\"}\nplain text\n"
	const timeout = 60 * time.Second
	deadline := time.Now().Add(timeout)
	for {
		got, err := os.ReadFile(file)
		if err == nil && len(got) >= len(want) {
			if string(got) != want {
				t.Fatalf("%s holds %q, want %q", file, got, want)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s after %s: %q (%v), want %q", file, timeout, got, err, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
	connect.DeleteConnector(t, name)
	// The worker stops the connector after answering the DELETE; its status
	// goes a moment later.
	testkafka.Await(t, 30*time.Second, "connector "+name+" to be gone (404)", func() bool {
		_, err := connect.Status(name)
		var apiErr *APIError
		return errors.As(err, &apiErr) && apiErr.Status == 404
	})
}
