package exec

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func pushRec(p int32, off int64, v string) *kgo.Record {
	return &kgo.Record{Partition: p, Offset: off, Key: []byte("k"), Value: []byte(v), Timestamp: time.UnixMilli(off)}
}

// drain returns the values C holds now.
func drain(s *PushSubscription) []string {
	var out []string
	for {
		select {
		case r, ok := <-s.C:
			if !ok {
				return out
			}
			out = append(out, string(r.Value))
		default:
			return out
		}
	}
}

// TestPushRegistryExactlyOnce: under exactly-once, records reach
// subscribers only once their transaction commits; an aborted
// transaction's never do.
func TestPushRegistryExactlyOnce(t *testing.T) {
	reg := NewPushRegistry("CSAS_O")
	sub, err := reg.Subscribe(10)
	if err != nil {
		t.Fatal(err)
	}
	reg.produced(pushRec(0, 0, "a"), true)
	reg.produced(pushRec(1, 0, "b"), true)
	if got := drain(sub); len(got) != 0 {
		t.Fatalf("before the commit: %v, want nothing", got)
	}
	reg.committed(true)
	if got := drain(sub); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("after the commit: %v, want [a b]", got)
	}
	reg.produced(pushRec(0, 1, "c"), true)
	reg.committed(false)
	reg.produced(pushRec(0, 2, "d"), true)
	reg.committed(true)
	if got := drain(sub); len(got) != 1 || got[0] != "d" {
		t.Fatalf("after an abort and a commit: %v, want [d]", got)
	}
}

// TestPushRegistrySlowSubscriber: a full buffer drops its subscriber
// with ErrPushSubscriberBehind (C closes after what it held); the others
// and the publisher go on.
func TestPushRegistrySlowSubscriber(t *testing.T) {
	reg := NewPushRegistry("CSAS_O")
	slow, _ := reg.Subscribe(2)
	fast, _ := reg.Subscribe(10)
	for i, v := range []string{"a", "b", "c", "d"} {
		reg.produced(pushRec(0, int64(i), v), false)
	}
	if got := drain(slow); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("slow subscriber read %v, want [a b] then the end", got)
	}
	if _, ok := <-slow.C; ok {
		t.Errorf("slow subscriber's C still open")
	}
	if err := slow.Err(); !errors.Is(err, ErrPushSubscriberBehind) {
		t.Errorf("slow subscriber ended with %v, want %v", err, ErrPushSubscriberBehind)
	}
	if got := drain(fast); len(got) != 4 {
		t.Errorf("fast subscriber read %v, want 4 records", got)
	}
	if n := reg.Subscribers(); n != 1 {
		t.Errorf("%d subscribers, want 1", n)
	}
	reg.Close(nil)
	if _, ok := <-fast.C; ok || !errors.Is(fast.Err(), ErrPushSourceStopped) {
		t.Errorf("after Close: open %v, err %v; want closed with %v", ok, fast.Err(), ErrPushSourceStopped)
	}
	if _, err := reg.Subscribe(0); !errors.Is(err, ErrPushSourceStopped) {
		t.Errorf("Subscribe after Close: %v, want %v", err, ErrPushSourceStopped)
	}
}
