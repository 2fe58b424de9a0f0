package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-sql/sluice/cluster"
	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/ksqlwire"
)

// Options configure a Server. The zero value serves plain HTTP without
// authentication.
type Options struct {
	// Users are the accepted HTTP Basic credentials, user → password.
	// Empty: no authentication.
	Users map[string]string
	// TLSCertFile and TLSKeyFile, when both set, make Serve speak TLS
	// (HTTP/1.1 and HTTP/2 negotiated by ALPN) instead of cleartext.
	TLSCertFile string
	TLSKeyFile  string
	// MaxBodyBytes bounds the body of /ksql, /query, /query-stream and
	// /close-query requests. Default 1 MiB. /inserts-stream bounds each
	// row instead (same limit), since its body is a stream.
	MaxBodyBytes int64
	// ReadHeaderTimeout bounds how long a client may take to send its
	// request headers. Default 10 s.
	ReadHeaderTimeout time.Duration
	// Version is the version /info reports. Default "0.29.0-sluice": the
	// ksqlDB API version whose shapes the server follows, so clients that
	// check versions pick the current API.
	Version string
	Log     *slog.Logger
	// Cluster, when set, makes this server one instance of several of
	// its service: pull queries read the partitions this instance owns
	// from local state and are forwarded to the owners of the others
	// (their /query-stream, with ForwardedHeader), and /clusterStatus
	// lists every instance. Nil: this instance answers from its own
	// state alone.
	Cluster *cluster.Registry
	// ForwardUser and ForwardPassword are the HTTP Basic credentials sent
	// with forwarded pull queries (the other instances must accept
	// them). Empty user: none sent.
	ForwardUser     string
	ForwardPassword string
	// ForwardTLS configures TLS for forwarded pull queries to https URLs.
	// Default: the system roots plus TLSCertFile, so instances sharing a
	// self-signed certificate trust each other.
	ForwardTLS *tls.Config
}

// Server serves ksqlDB's REST API over an engine.
type Server struct {
	eng  *engine.Engine
	opts Options
	log  *slog.Logger
	mux  *http.ServeMux
	// forwarder sends pull queries to other instances.
	forwarder *http.Client
	// suspects are instances that recently left a forward unanswered.
	suspects suspects

	// seq numbers the commands /ksql executed, as commandSequenceNumber.
	seq atomic.Int64

	mu     sync.Mutex
	pushes map[string]*push
	// statuses are the command statuses /ksql answered, by command id,
	// for GET /status; a later command with the same id replaces one.
	statuses map[string]ksqlwire.CommandStatus
	hs       *http.Server

	// rates measures the console's records/s.
	rates rateMeter

	// closing is closed when Shutdown starts: push queries see it and end
	// their responses cleanly, so the HTTP server's shutdown can finish.
	closing   chan struct{}
	closeOnce sync.Once
}

// Version is the version the server reports (/info, and version() over
// the Postgres front door).
func (s *Server) Version() string { return s.opts.Version }

// New returns a server over eng. Register extra endpoints (for example
// GET /metrics) with Handle before Serve.
func New(eng *engine.Engine, opts Options) *Server {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 1 << 20
	}
	if opts.ReadHeaderTimeout <= 0 {
		opts.ReadHeaderTimeout = 10 * time.Second
	}
	if opts.Version == "" {
		opts.Version = "0.29.0-sluice"
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	s := &Server{eng: eng, opts: opts, log: opts.Log, mux: http.NewServeMux(),
		pushes: map[string]*push{}, statuses: map[string]ksqlwire.CommandStatus{}, closing: make(chan struct{}), forwarder: forwardClient(opts)}
	s.mux.HandleFunc("POST /ksql", s.handleKSQL)
	s.mux.HandleFunc("POST /query-stream", s.handleQueryStream)
	s.mux.HandleFunc("POST /query", s.handleQuery)
	s.mux.HandleFunc("POST /inserts-stream", s.handleInsertsStream)
	s.mux.HandleFunc("POST /close-query", s.handleCloseQuery)
	s.mux.HandleFunc("GET /info", s.handleInfo)
	s.mux.HandleFunc("GET /healthcheck", s.handleHealthcheck)
	s.mux.HandleFunc("GET /clusterStatus", s.handleClusterStatus)
	s.mux.HandleFunc("GET /status", s.handleStatuses)
	s.mux.HandleFunc("GET /status/{id...}", s.handleStatus)
	s.registerConsole()
	return s
}

// forwardClient is the HTTP client of forwarded pull queries.
func forwardClient(opts Options) *http.Client {
	tc := opts.ForwardTLS
	if tc == nil {
		tc = &tls.Config{MinVersion: tls.VersionTLS12}
		if opts.TLSCertFile != "" {
			if pem, err := os.ReadFile(opts.TLSCertFile); err == nil {
				roots, err := x509.SystemCertPool()
				if err != nil {
					roots = x509.NewCertPool()
				}
				roots.AppendCertsFromPEM(pem)
				tc.RootCAs = roots
			}
		}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tc
	tr.DialContext = (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext
	return &http.Client{Transport: tr}
}

// Handle registers an extra endpoint with a net/http ServeMux pattern
// ("GET /metrics"). It sits behind the same authentication as the rest.
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// Handler is the server's HTTP handler with authentication applied.
func (s *Server) Handler() http.Handler { return s.authenticate(s.mux) }

// Serve accepts connections on ln until Shutdown. It returns nil after a
// Shutdown, or the error that stopped it.
func (s *Server) Serve(ln net.Listener) error {
	var protos http.Protocols
	protos.SetHTTP1(true)
	protos.SetHTTP2(true)
	// HTTP/2 with prior knowledge on the cleartext port: ksqlDB's clients
	// use it for /query-stream and /inserts-stream.
	protos.SetUnencryptedHTTP2(true)
	hs := &http.Server{
		Handler:           s.Handler(),
		Protocols:         &protos,
		ReadHeaderTimeout: s.opts.ReadHeaderTimeout,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	s.mu.Lock()
	select {
	case <-s.closing:
		s.mu.Unlock()
		return nil
	default:
	}
	s.hs = hs
	s.mu.Unlock()
	var err error
	if s.opts.TLSCertFile != "" || s.opts.TLSKeyFile != "" {
		hs.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
		err = hs.ServeTLS(ln, s.opts.TLSCertFile, s.opts.TLSKeyFile)
	} else {
		err = hs.Serve(ln)
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return fmt.Errorf("serve http: %w", err)
}

// Shutdown stops accepting requests, ends the responses of running push
// queries (each ends as its format ends a finished query) and waits for
// requests in flight until ctx is done. The engine stays open: the caller
// closes it after, so persistent queries flush and commit.
func (s *Server) Shutdown(ctx context.Context) error {
	s.closeOnce.Do(func() { close(s.closing) })
	s.mu.Lock()
	hs := s.hs
	pushes := make([]*push, 0, len(s.pushes))
	for _, p := range s.pushes {
		pushes = append(pushes, p)
	}
	s.mu.Unlock()
	for _, p := range pushes {
		s.stop(p)
	}
	if hs == nil {
		return nil
	}
	if err := hs.Shutdown(ctx); err != nil {
		return fmt.Errorf("shut down http server: %w", err)
	}
	return nil
}

func (s *Server) shuttingDown() bool {
	select {
	case <-s.closing:
		return true
	default:
		return false
	}
}

// stop ends a push query from outside its request.
func (s *Server) stop(p *push) {
	p.stopped.Store(true)
	p.rs.Close()
}
