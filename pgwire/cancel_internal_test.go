package pgwire

import (
	"context"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"
)

// idleSession is a session with just what cancelling needs: its pump
// over conn (reading when read is set) and its context.
func idleSession(t *testing.T, conn net.Conn, read bool) *session {
	t.Helper()
	in := &pump{conn: conn, gone: make(chan struct{})}
	in.cond = sync.NewCond(&in.mu)
	if read {
		go in.loop()
	}
	t.Cleanup(in.stop)
	ctx, stop := context.WithCancelCause(context.Background())
	t.Cleanup(func() { stop(nil) })
	return &session{in: in, ctx: ctx, stop: stop}
}

// tcpPair is both ends of a loopback TCP connection.
func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

func canceledByUser(ctx context.Context) bool {
	return ctx.Err() != nil && context.Cause(ctx) == errUserCancel
}

// A cancel while a statement context is open reaches every statement
// context after it until the session is idle again: a push query's start
// and its drain are two.
func TestCancelDuringStartReachesTheDrain(t *testing.T) {
	_, server := tcpPair(t)
	ss := idleSession(t, server, true)
	start, startDone := ss.statementContext()
	ss.cancelStatement()
	if !canceledByUser(start) {
		t.Fatalf("start's context: %v, %v; want canceled by user", start.Err(), context.Cause(start))
	}
	startDone()
	drain, drainDone := ss.statementContext()
	if !canceledByUser(drain) {
		t.Errorf("drain's context after a cancel during start: %v; want canceled by user", drain.Err())
	}
	drainDone()
	ss.markIdle()
	next, nextDone := ss.statementContext()
	defer nextDone()
	if next.Err() != nil {
		t.Errorf("the next cycle's context: %v; want live (the cancel is spent at ReadyForQuery)", next.Err())
	}
}

// A CancelRequest can be accepted before the session's pump has read the
// query it cancels: bytes the client sent that wait in the kernel count
// as a statement not started yet. With nothing sent, the cancel does
// nothing.
func TestCancelCountsBytesThePumpHasNotRead(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux's socketUnread asks the kernel")
	}
	client, server := tcpPair(t)
	ss := idleSession(t, server, false) // the pump does not read
	ss.markIdle()
	ss.cancelStatement()
	if ctx, done := ss.statementContext(); ctx.Err() != nil {
		done()
		t.Fatalf("a cancel to an idle session with nothing sent canceled the next statement: %v", context.Cause(ctx))
	} else {
		done()
	}
	if _, err := client.Write([]byte("Q\x00\x00\x00\x0dSELECT 1\x00")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for ss.in.unread() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := ss.in.unread(); got != 14 {
		t.Fatalf("unread bytes: %d, want 14", got)
	}
	if got := ss.in.received(); got != 0 {
		t.Fatalf("the pump read %d bytes; the test needs them in the kernel", got)
	}
	ss.cancelStatement()
	ctx, done := ss.statementContext()
	defer done()
	if !canceledByUser(ctx) {
		t.Errorf("a cancel after the query was sent, before the pump read it: %v; want canceled by user", ctx.Err())
	}
}
