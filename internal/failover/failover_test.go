package failover

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestRetriable(t *testing.T) {
	refused := fmt.Errorf("unable to dial: %w", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)})
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"dial refused", refused, true},
		{"connection reset", fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{"not leader", kerr.NotLeaderForPartition, true},
		{"leader not available", fmt.Errorf("wrapped: %w", kerr.LeaderNotAvailable), true},
		{"unknown topic", kerr.UnknownTopicOrPartition, true},
		{"authorization", kerr.TopicAuthorizationFailed, false},
		{"shards all dial errors", &kadm.ShardErrors{Name: "ListOffsets", Errs: []kadm.ShardError{{Err: refused}, {Err: kerr.NotLeaderForPartition}}}, true},
		{"shards with an authorization error", &kadm.ShardErrors{Name: "ListOffsets", Errs: []kadm.ShardError{{Err: refused}, {Err: kerr.TopicAuthorizationFailed}}}, false},
		{"wrapped shards", fmt.Errorf("end offset of t/3: %w", &kadm.ShardErrors{Errs: []kadm.ShardError{{Err: refused}}}), true},
		{"cancelled", context.Canceled, false},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), false},
		{"client closed", kgo.ErrClientClosed, false},
		{"plain", errors.New("bad config"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Retriable(c.err); got != c.want {
				t.Errorf("Retriable(%v) = %v, want %v", c.err, got, c.want)
			}
		})
	}
}

func TestDo(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	for _, c := range []struct {
		name     string
		fails    []error // the errors of the first attempts, then success
		window   time.Duration
		attempts int
		wantErr  string
	}{
		{"first try", nil, time.Minute, 1, ""},
		{"after a leader move", []error{refused, kerr.NotLeaderForPartition}, time.Minute, 3, ""},
		{"not retriable", []error{kerr.TopicAuthorizationFailed}, time.Minute, 1, kerr.TopicAuthorizationFailed.Error()},
		{"window passes", []error{refused, refused, refused, refused, refused}, 250 * time.Millisecond, 2,
			"end offsets of t: still failing after 2 attempts over "},
	} {
		t.Run(c.name, func(t *testing.T) {
			attempts := 0
			v, err := do(context.Background(), "end offsets of t", c.window, func(context.Context) (int, error) {
				attempts++
				if attempts <= len(c.fails) {
					return 0, c.fails[attempts-1]
				}
				return 42, nil
			})
			if attempts != c.attempts {
				t.Errorf("%d attempts, want %d", attempts, c.attempts)
			}
			switch {
			case c.wantErr == "" && (err != nil || v != 42):
				t.Errorf("got %d, %v; want 42", v, err)
			case c.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), c.wantErr)):
				t.Errorf("error %v, want it to start with %q", err, c.wantErr)
			}
		})
	}
}

func TestOffsetsRetriesAPartitionError(t *testing.T) {
	attempts := 0
	offs, err := Offsets(context.Background(), "end offsets of t", func(context.Context) (kadm.ListedOffsets, error) {
		attempts++
		lo := kadm.ListedOffset{Topic: "t", Partition: 0, Offset: 7}
		if attempts == 1 {
			lo.Err = kerr.NotLeaderForPartition
		}
		return kadm.ListedOffsets{"t": {0: lo}}, nil
	})
	if lo, ok := offs.Lookup("t", 0); err != nil || !ok || lo.Err != nil || lo.Offset != 7 || attempts != 2 {
		t.Errorf("got %+v, %v after %d attempts; want offset 7 after 2", lo, err, attempts)
	}
}
