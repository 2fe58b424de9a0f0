package main

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	sexec "github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestServerClusterPullRange runs two `sluice server` processes of one
// service over a 4-partition table (a CREATE SOURCE TABLE with an INT
// key, 40 keys) and sends a range pull query to each: the answer is the
// exact rows in range, partition by partition in ascending partition
// order and in key order within each, whichever instance answers and
// which partitions it forwards; X-Sluice-Keys-Read says the instances
// read 20 store entries, the keys in range and no others of the 40.
// With ksql.query.pull.range.scan.enabled=false the same rows come
// from scans that read all 40.
func TestServerClusterPullRange(t *testing.T) {
	brokers := testkafka.Brokers(t)
	svc := testkafka.Name(t, "svc")
	topic := testkafka.Name(t, "nums")
	const parts, keys, lo, hi = 4, 40, 5, 24
	testkafka.CreateTopic(t, brokers, topic, parts)
	keyBytes := func(id int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(id)) }
	var recs []*kgo.Record
	perPartition := make([][]string, parts)
	for id := range keys {
		recs = append(recs, &kgo.Record{Topic: topic, Key: keyBytes(id), Value: fmt.Appendf(nil, `{"V":"v%d"}`, id)})
		if id >= lo && id <= hi {
			p := sexec.KeyPartition(topic, keyBytes(id), parts)
			perPartition[p] = append(perPartition[p], fmt.Sprintf(`[%d,"v%d"]`, id, id))
		}
	}
	var want []string
	for p, rows := range perPartition {
		if len(rows) == 0 {
			t.Fatalf("no key in range falls in partition %d", p)
		}
		want = append(want, rows...)
	}
	testkafka.Produce(t, brokers, recs...)

	args := serverArgs(t, brokers, svc)
	a := startServer(t, args()...)
	defer a.stop(t, 30*time.Second)
	b := startServer(t, args()...)
	defer b.stop(t, 30*time.Second)
	live := []*serverProc{a, b}
	defer func() {
		if t.Failed() {
			for _, s := range live {
				t.Logf("%s stderr (tail):\n%s", s.base, tail(s.stderr.String(), 30))
			}
		}
	}()
	ksql := fmt.Sprintf("CREATE SOURCE TABLE nums (id INT PRIMARY KEY, v STRING) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');", topic)
	if code, _, body := a.authed(t, "POST", "/ksql", `{"ksql":"`+ksql+`","streamsProperties":{"auto.offset.reset":"earliest"}}`); code != 200 {
		t.Fatalf("create: %d %s", code, body)
	}
	owner := a.owners(t, "CST_NUMS", []string{topic}, parts, live)
	if o := b.owners(t, "CST_NUMS", []string{topic}, parts, live); fmt.Sprint(o) != fmt.Sprint(owner) {
		t.Fatalf("%s sees owners %v, %s sees %v", a.base, owner, b.base, o)
	}
	sql := fmt.Sprintf("SELECT * FROM nums WHERE id >= %d AND id <= %d;", lo, hi)
	for _, tc := range []struct {
		props    string
		keysRead string
	}{
		{"", "20"},
		{`,"properties":{"ksql.query.pull.range.scan.enabled":"false"}`, "40"},
	} {
		forwarded := false
		for _, s := range live {
			var got []string
			var last string
			for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
				code, hdr, body := s.authed(t, "POST", "/query-stream", `{"sql":"`+sql+`"`+tc.props+`}`)
				last = fmt.Sprintf("%d %s", code, body)
				if code == 200 {
					lines := strings.Split(strings.TrimSpace(body), "\n")
					got = lines[1:]
					if len(got) == len(want) {
						if !slices.Equal(got, want) {
							t.Errorf("%s%s: rows\n%s\nwant, partition by partition in key order,\n%s", s.base, tc.props, strings.Join(got, "\n"), strings.Join(want, "\n"))
						}
						if k := hdr.Get("X-Sluice-Keys-Read"); k != tc.keysRead {
							t.Errorf("%s%s: keys read %q, want %s", s.base, tc.props, k, tc.keysRead)
						}
						forwarded = forwarded || hdr.Get("X-Sluice-Forwarded-To") != ""
						break
					}
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s%s: never %d rows; last: %s", s.base, tc.props, len(want), last)
				}
			}
		}
		if !forwarded {
			t.Errorf("%s: neither instance forwarded a partition", tc.props)
		}
	}
}
