package connect_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/connect"
)

// A Connect URL where nothing listens is a clear error at once, naming
// the URL without its credentials.
func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	cl, err := connect.New("http://user:secret@" + addr)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = cl.Names(context.Background())
	var ue *connect.UnreachableError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %v (%T), want an UnreachableError", err, err)
	}
	want := "Kafka Connect at http://" + addr + " is not reachable: "
	if !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("err = %q, want %q…connection refused", err, want)
	}
	if strings.Contains(err.Error(), "secret") {
		t.Errorf("err shows the password: %q", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v to fail", d)
	}
}

// A Connect that accepts the connection and never answers is reported
// when the timeout passes, not waited on.
func TestHungConnect(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// Accept and hold the connection without answering.
	held := make(chan net.Conn, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			held <- c
		}
	}()
	defer func() {
		select {
		case c := <-held:
			c.Close()
		default:
		}
	}()
	cl, err := connect.New("http://"+ln.Addr().String(), connect.WithTimeout(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = cl.Status(context.Background(), "X")
	var ue *connect.UnreachableError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %v (%T), want an UnreachableError", err, err)
	}
	want := "Kafka Connect at http://" + ln.Addr().String() + " is not reachable: no answer within the timeout: "
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err = %q, want it to start %q", err, want)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v to fail", d)
	}
}

func TestNewRefusesABadURL(t *testing.T) {
	for _, u := range []string{"localhost:8083", "ftp://h:1", "http://"} {
		if _, err := connect.New(u); err == nil || !strings.Contains(err.Error(), "want http://host:port or https://host:port") {
			t.Errorf("New(%q) = %v, want a URL error", u, err)
		}
	}
}
