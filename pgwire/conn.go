package pgwire

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// startupTimeout bounds the whole startup of a connection: TLS,
// startup message and authentication.
const startupTimeout = 30 * time.Second

// maxMessageLen bounds one message from a client (a statement text, a
// Bind's parameters).
const maxMessageLen = 64 << 20

// serveConn runs one connection: its startup (TLS, the startup message
// or a CancelRequest, authentication), then its session.
func (s *Server) serveConn(conn net.Conn) {
	defer func() {
		// A fault in one session ends that connection, never the server.
		if r := recover(); r != nil {
			s.log.Error("postgres: session failed", "remote", conn.RemoteAddr().String(), "panic", r, "stack", string(debug.Stack()))
		}
	}()
	_ = conn.SetDeadline(time.Now().Add(startupTimeout))
	conn, startup, err := s.negotiate(conn)
	if err != nil {
		s.refuse(conn, err)
		return
	}
	if startup == nil { // a CancelRequest, answered
		return
	}
	user := startup.Parameters["user"]
	if user == "" {
		s.refuse(conn, fatal(codeInvalidAuthorization, "no PostgreSQL user name specified in startup packet"))
		return
	}
	if _, isTLS := conn.(*tls.Conn); s.opts.TLS != nil && !isTLS {
		s.refuse(conn, fatal(codeInvalidAuthorization, "TLS is required: connect with sslmode=require (or verify-ca, verify-full)"))
		return
	}
	in := newPump(conn)
	defer in.stop()
	be := pgproto3.NewBackend(in, conn)
	be.SetMaxBodyLen(maxMessageLen)
	if !s.auth.trusts() {
		if err := s.auth.authenticate(be, user); err != nil {
			s.log.Info("postgres: authentication failed", "user", user, "remote", conn.RemoteAddr().String(), "err", err)
			s.send(be, toPG(err, "", 0))
			return
		}
	}
	_ = conn.SetDeadline(time.Time{})
	ss := newSession(s, be, in, startup.Parameters)
	if err := s.register(ss); err != nil {
		s.send(be, toPG(err, "", 0))
		return
	}
	defer s.unregister(ss)
	if err := ss.startup(); err != nil {
		s.send(be, toPG(err, "", 0))
		return
	}
	ss.run()
}

// negotiate reads the first packets of a connection: SSLRequest
// (answered 'S' and TLS when the server has it, else 'N'),
// GSSENCRequest ('N'), then a StartupMessage, or a CancelRequest, which
// it carries out (startup nil). A malformed packet is FATAL 08P01.
func (s *Server) negotiate(conn net.Conn) (net.Conn, *pgproto3.StartupMessage, error) {
	be := pgproto3.NewBackend(conn, conn)
	for {
		msg, err := be.ReceiveStartupMessage()
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return conn, nil, err
			}
			return conn, nil, protocolErrorf("invalid startup packet: %v", err)
		}
		switch m := msg.(type) {
		case *pgproto3.SSLRequest:
			if _, already := conn.(*tls.Conn); already || s.opts.TLS == nil {
				if _, err := conn.Write([]byte{'N'}); err != nil {
					return conn, nil, err
				}
				continue
			}
			if _, err := conn.Write([]byte{'S'}); err != nil {
				return conn, nil, err
			}
			tc := tls.Server(conn, s.opts.TLS)
			if err := tc.Handshake(); err != nil {
				return conn, nil, fmt.Errorf("tls handshake: %w", err)
			}
			conn = tc
			be = pgproto3.NewBackend(conn, conn)
		case *pgproto3.GSSEncRequest:
			if _, err := conn.Write([]byte{'N'}); err != nil {
				return conn, nil, err
			}
		case *pgproto3.CancelRequest:
			s.cancel(m.ProcessID, m.SecretKey)
			return conn, nil, nil
		case *pgproto3.StartupMessage:
			if m.ProtocolVersion != pgproto3.ProtocolVersion30 {
				// 3.2 (longer cancel keys) is not needed: answer in 3.0.
				be.Send(&pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: 0})
			}
			return conn, m, nil
		default:
			return conn, nil, protocolErrorf("unsupported startup message %T", msg)
		}
	}
}

// refuse ends a connection with err as a FATAL ErrorResponse, when err
// is the protocol's to say; a connection that went away gets nothing.
func (s *Server) refuse(conn net.Conn, err error) {
	var pe *pgError
	if !errors.As(err, &pe) {
		if !errors.Is(err, io.EOF) {
			s.log.Debug("postgres: connection ended in startup", "remote", conn.RemoteAddr().String(), "err", err)
		}
		return
	}
	s.log.Info("postgres: connection refused", "remote", conn.RemoteAddr().String(), "code", pe.code, "err", pe.message)
	be := pgproto3.NewBackend(conn, conn)
	s.send(be, pe)
}

// send writes one error to a client that is being turned away: FATAL
// whatever the error's severity was.
func (s *Server) send(be *pgproto3.Backend, pe *pgError) {
	r := pe.response()
	r.Severity, r.SeverityUnlocalized = "FATAL", "FATAL"
	be.Send(r)
	_ = be.Flush()
}

// pump reads a connection in a goroutine of its own, so the session
// learns that its client went away (and cancels what it runs) even while
// it is not reading, as during a push query. It buffers at most
// pumpLimit bytes ahead of the session.
type pump struct {
	conn net.Conn
	mu   sync.Mutex
	cond *sync.Cond
	buf  []byte
	err  error
	// total counts the bytes read from the connection.
	total int64
	// gone is closed when the connection's reading side ended.
	gone     chan struct{}
	stopOnce sync.Once
	stopped  bool
}

const pumpLimit = 1 << 20

func newPump(conn net.Conn) *pump {
	p := &pump{conn: conn, gone: make(chan struct{})}
	p.cond = sync.NewCond(&p.mu)
	go p.loop()
	return p
}

func (p *pump) loop() {
	chunk := make([]byte, 32<<10)
	for {
		n, err := p.conn.Read(chunk)
		p.mu.Lock()
		p.buf = append(p.buf, chunk[:n]...)
		p.total += int64(n)
		if err != nil {
			p.err = err
			p.cond.Broadcast()
			p.mu.Unlock()
			close(p.gone)
			return
		}
		p.cond.Broadcast()
		for len(p.buf) >= pumpLimit && !p.stopped {
			p.cond.Wait()
		}
		stopped := p.stopped
		p.mu.Unlock()
		if stopped {
			close(p.gone)
			return
		}
	}
}

// received is how many bytes the client has sent so far.
func (p *pump) received() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.total
}

// unread is how many bytes the client sent that the pump has not read
// yet (they wait in the kernel): a CancelRequest on a connection of its
// own can be accepted before the pump's goroutine reads the query it
// cancels.
func (p *pump) unread() int { return socketUnread(p.conn) }

// Read gives the bytes read so far, waiting for some.
func (p *pump) Read(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.buf) == 0 && p.err == nil && !p.stopped {
		p.cond.Wait()
	}
	if len(p.buf) > 0 {
		n := copy(b, p.buf)
		p.buf = p.buf[n:]
		p.cond.Broadcast()
		return n, nil
	}
	if p.stopped {
		return 0, net.ErrClosed
	}
	return 0, p.err
}

// stop ends the pump; the caller closes the connection, which ends a
// read in progress.
func (p *pump) stop() {
	p.stopOnce.Do(func() {
		p.mu.Lock()
		p.stopped = true
		p.cond.Broadcast()
		p.mu.Unlock()
	})
}

var errClientGone = errors.New("client went away")
