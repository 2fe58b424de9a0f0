package pgwire

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"
)

// Auth methods a server asks clients for when it has users.
const (
	AuthSCRAM     = "scram-sha-256"
	AuthPassword  = "password"
	defaultMethod = AuthSCRAM
)

// Options configure a Server.
type Options struct {
	// Users are the accepted user names and passwords, the same as the
	// REST API's. Empty: every client is trusted.
	Users map[string]string
	// AuthMethod is how a client proves its password: AuthSCRAM
	// (default) or AuthPassword (cleartext, for clients without SCRAM;
	// use it over TLS).
	AuthMethod string
	// TLS, when set, is offered to clients that ask (SSLRequest), and a
	// client that does not ask is refused, as the REST API serves only
	// TLS then.
	TLS *tls.Config
	Log *slog.Logger
}

// Server serves the Postgres protocol over a Backend.
type Server struct {
	be   Backend
	opts Options
	log  *slog.Logger
	auth *authenticator

	mu       sync.Mutex
	ln       net.Listener
	sessions map[uint32]*session
	conns    map[net.Conn]struct{}
	closing  bool
	wg       sync.WaitGroup
}

// New returns a server over be.
func New(be Backend, opts Options) (*Server, error) {
	if opts.AuthMethod == "" {
		opts.AuthMethod = defaultMethod
	}
	if opts.AuthMethod != AuthSCRAM && opts.AuthMethod != AuthPassword {
		return nil, fmt.Errorf("postgres auth method %q: want %s or %s", opts.AuthMethod, AuthSCRAM, AuthPassword)
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	a, err := newAuthenticator(opts.Users, opts.AuthMethod)
	if err != nil {
		return nil, err
	}
	return &Server{be: be, opts: opts, log: opts.Log, auth: a, sessions: map[uint32]*session{}, conns: map[net.Conn]struct{}{}}, nil
}

// Serve accepts connections on ln until Shutdown, each served by a
// goroutine of its own. It returns nil after Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return nil
	}
	s.ln = ln
	s.mu.Unlock()
	var backoff time.Duration
	for {
		conn, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closing := s.closing
			s.mu.Unlock()
			if closing {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				time.Sleep(backoff)
				continue
			}
			return fmt.Errorf("postgres: accept: %w", err)
		}
		backoff = 0
		if !s.track(conn) {
			_ = conn.Close()
			return nil
		}
		go func() {
			defer s.wg.Done()
			defer s.untrack(conn)
			s.serveConn(conn)
		}()
	}
}

func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	return true
}

func (s *Server) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	_ = c.Close()
}

// Shutdown stops accepting connections, tells every session the server
// is going away (FATAL 57P01 after its running statement is canceled)
// and waits for them until ctx is done, when it closes what is left.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	ln := s.ln
	sessions := make([]*session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		sessions = append(sessions, ss)
	}
	s.mu.Unlock()
	if ln != nil {
		_ = ln.Close()
	}
	for _, ss := range sessions {
		ss.shutdown()
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		for c := range s.conns {
			_ = c.Close()
		}
		s.mu.Unlock()
		<-done
		return ctx.Err()
	}
}

// register gives a session its BackendKeyData: a process id unique
// among the server's sessions and a random secret.
func (s *Server) register(ss *session) error {
	var b [8]byte
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return fatal(codeAdminShutdown, "the database system is shutting down")
	}
	for {
		if _, err := rand.Read(b[:]); err != nil {
			return fmt.Errorf("session key: %w", err)
		}
		pid := binary.BigEndian.Uint32(b[:4]) & 0x7fffffff
		if _, taken := s.sessions[pid]; pid == 0 || taken {
			continue
		}
		ss.pid, ss.secret = pid, append([]byte(nil), b[4:]...)
		s.sessions[pid] = ss
		return nil
	}
}

func (s *Server) unregister(ss *session) {
	s.mu.Lock()
	delete(s.sessions, ss.pid)
	s.mu.Unlock()
}

// cancel cancels the running statement of the session pid when secret
// is its key; anything else does nothing, as Postgres (the sender learns
// nothing either way).
func (s *Server) cancel(pid uint32, secret []byte) {
	s.mu.Lock()
	ss := s.sessions[pid]
	s.mu.Unlock()
	if ss == nil || len(secret) != len(ss.secret) || subtle.ConstantTimeCompare(secret, ss.secret) != 1 {
		return
	}
	ss.cancelStatement()
}
