package failover

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Window bounds how long a lookup is retried. It covers a KRaft broker's
// session timeout (broker.session.timeout.ms, 9 s by default), the new
// leader's election, and the client's metadata cache (kgo's
// MetadataMinAge, 5 s), with room for a loaded machine.
const Window = 60 * time.Second

// backoff is the first pause between attempts; it doubles up to maxBackoff.
const backoff, maxBackoff = 100 * time.Millisecond, 2 * time.Second

// Do calls fn until it succeeds, returns an error Retriable does not
// accept, ctx ends, or Window has passed. The last error is returned
// wrapped with what and the time spent.
func Do[T any](ctx context.Context, what string, fn func(context.Context) (T, error)) (T, error) {
	return do(ctx, what, Window, fn)
}

// Offsets is Do for an offset listing, which also counts a per-partition
// error (NOT_LEADER_OR_FOLLOWER from a broker that lost leadership, an
// unknown partition of a topic created a moment ago) as a failed attempt
// when it is retriable.
func Offsets(ctx context.Context, what string, fn func(context.Context) (kadm.ListedOffsets, error)) (kadm.ListedOffsets, error) {
	return do(ctx, what, Window, func(ctx context.Context) (kadm.ListedOffsets, error) {
		offs, err := fn(ctx)
		if err == nil {
			if perr := offs.Error(); Retriable(perr) {
				return offs, perr
			}
		}
		return offs, err
	})
}

func do[T any](ctx context.Context, what string, window time.Duration, fn func(context.Context) (T, error)) (T, error) {
	start := time.Now()
	pause := backoff
	for attempt := 1; ; attempt++ {
		v, err := fn(ctx)
		if err == nil || !Retriable(err) || ctx.Err() != nil {
			if err != nil && attempt > 1 {
				err = fmt.Errorf("%s (after %d attempts over %s): %w", what, attempt, time.Since(start).Round(time.Millisecond), err)
			}
			return v, err
		}
		if time.Since(start)+pause > window {
			return v, fmt.Errorf("%s: still failing after %d attempts over %s: %w", what, attempt, time.Since(start).Round(time.Millisecond), err)
		}
		select {
		case <-ctx.Done():
			return v, fmt.Errorf("%s: %w (last error: %w)", what, ctx.Err(), err)
		case <-time.After(pause):
		}
		pause = min(2*pause, maxBackoff)
	}
}

// Retriable reports whether err is what a broker's death or a leader's
// move looks like to a client: a failed dial or a dropped connection, a
// retriable Kafka error code (NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE,
// UNKNOWN_TOPIC_OR_PARTITION…), or a sharded request whose every failed
// shard failed that way. A cancelled context and a closed client are not.
func Retriable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, kgo.ErrClientClosed) {
		return false
	}
	if se, ok := errors.AsType[*kadm.ShardErrors](err); ok && len(se.Errs) > 0 {
		for _, s := range se.Errs {
			if !Retriable(s.Err) {
				return false
			}
		}
		return true
	}
	if kerr.IsRetriable(err) || kgo.IsRetryableBrokerErr(err) {
		return true
	}
	if _, ok := errors.AsType[*net.OpError](err); ok {
		return true
	}
	for _, e := range []error{syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.EPIPE, syscall.EHOSTUNREACH, syscall.ENETUNREACH, io.EOF, io.ErrUnexpectedEOF} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
