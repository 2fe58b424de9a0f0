package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/alecthomas/kong"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/sluice-sql/sluice/cluster"
	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/metrics"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/pgwire"
	"github.com/sluice-sql/sluice/planner"
	"github.com/sluice-sql/sluice/server"
)

type serverCmd struct {
	Config    kong.ConfigFlag `placeholder:"FILE" help:"JSON file with any of these flags, named with '_' for '-' (e.g. {\"listen\": \"0.0.0.0:8088\", \"data_dir\": \"/var/lib/sluice\"}); flags given on the command line win."`
	Brokers   []string        `sep:"," env:"SLUICE_BROKERS" help:"Kafka bootstrap servers (host:port,…). Without them Sluice starts its embedded broker."`
	Listen    string          `default:"127.0.0.1:8088" env:"SLUICE_LISTEN" help:"Address the HTTP API listens on (HTTP/1.1 and HTTP/2 on one port)."`
	Advertise string          `name:"advertised-url" env:"SLUICE_ADVERTISED_URL" placeholder:"URL" help:"URL other instances of the service reach this one at (pull queries are forwarded there). Default: http(s)://<listen address>, with this host's name for 0.0.0.0 or ::."`
	DataDir   string          `name:"data-dir" default:"./sluice-data" env:"SLUICE_DATA_DIR" help:"Directory for local state (and the embedded broker's data)."`
	ServiceID string          `name:"service-id" default:"default" env:"SLUICE_SERVICE_ID" help:"Service id: instances with the same id share queries."`
	Auth      []string        `sep:"none" env:"SLUICE_AUTH" placeholder:"USER:PASSWORD" help:"Require HTTP Basic authentication with these credentials (repeatable). /healthcheck stays open."`
	TLSCert   string          `name:"tls-cert" env:"SLUICE_TLS_CERT" type:"existingfile" help:"Certificate (PEM) to serve HTTPS with; needs --tls-key."`
	TLSKey    string          `name:"tls-key" env:"SLUICE_TLS_KEY" type:"existingfile" help:"Private key (PEM) of --tls-cert."`
	File      string          `type:"existingfile" env:"SLUICE_FILE" help:"SQL file whose statements run at start (no push SELECTs)."`
	PGListen  string          `name:"pg-listen" env:"SLUICE_PG_LISTEN" placeholder:"HOST:PORT" help:"Also serve the PostgreSQL protocol (psql, JDBC, psycopg, Grafana) on this address, e.g. 127.0.0.1:5433; off unless given. Same users as --auth; with --tls-cert/--tls-key clients must use TLS."`
	PGAuth    string          `name:"pg-auth" env:"SLUICE_PG_AUTH" enum:"scram-sha-256,password" default:"scram-sha-256" help:"How Postgres clients prove their --auth password: scram-sha-256 (default) or password (cleartext; use with TLS)."`

	KafkaTLS      bool   `name:"kafka-tls" env:"SLUICE_KAFKA_TLS" help:"Connect to Kafka over TLS (system roots)."`
	SASLMechanism string `name:"sasl-mechanism" env:"SLUICE_SASL_MECHANISM" enum:",PLAIN,SCRAM-SHA-256,SCRAM-SHA-512" default:"" help:"SASL mechanism for Kafka: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512."`
	SASLUser      string `name:"sasl-user" env:"SLUICE_SASL_USER" help:"SASL user name."`
	SASLPassword  string `name:"sasl-password" env:"SLUICE_SASL_PASSWORD" help:"SASL password."`
	embeddedBrokerFlags
	registryFlags
	connectFlags
	udfDirFlag
}

func (c *serverCmd) Run(log *slog.Logger) error {
	users, err := parseUsers(c.Auth)
	if err != nil {
		return &exitError{2, "sluice server: " + err.Error()}
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return &exitError{2, "sluice server: --tls-cert and --tls-key go together"}
	}
	var script string
	if c.File != "" {
		b, err := os.ReadFile(c.File)
		if err != nil {
			return &exitError{2, fmt.Sprintf("sluice server: %v", err)}
		}
		script = string(b)
		if _, err := parser.ParseScript(script); err != nil {
			return &exitError{2, fmt.Sprintf("%s: %s", c.File, engine.FormatError(script, err))}
		}
	}
	connOpts, err := c.kafkaOpts()
	if err != nil {
		return &exitError{2, "sluice server: " + err.Error()}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	brokers := c.Brokers
	if len(brokers) == 0 {
		b, err := c.startBroker(c.DataDir, log, true)
		if err != nil {
			return err
		}
		defer b.Close()
		brokers = []string{b.Addr()}
		connOpts = nil // the embedded broker speaks neither TLS nor SASL
	}
	connOpts = append(connOpts, kafkaConn(brokers, c.SASLMechanism != "" && len(c.Brokers) > 0)...)
	if c.SchemaRegistry == "" && c.Config != "" {
		c.SchemaRegistry = configString(string(c.Config), "ksql.schema.registry.url")
	}
	if c.ConnectURL == "" && c.Config != "" {
		c.ConnectURL = configString(string(c.Config), "ksql.connect.url")
	}
	c.announceConnect(log)
	schemas, served, closeSchemas, err := c.schemaRegistry(len(c.Brokers) == 0, c.DataDir, log)
	if err != nil {
		return err
	}
	defer closeSchemas()
	announceRegistry(log, served)
	reg := metrics.New()
	// The registry starts once the listener's address is known, after the
	// engine has started its queries; until then there is nobody to tell.
	var instances atomic.Pointer[cluster.Registry]
	changed := func() {
		if r := instances.Load(); r != nil {
			r.Changed()
		}
	}
	live := func() int {
		if r := instances.Load(); r != nil {
			return r.Live()
		}
		return 1
	}
	e, err := engine.Open(ctx, engine.Config{ConnOpts: connOpts, DataDir: c.DataDir, ServiceID: c.ServiceID, Log: log, ClientOpts: reg.ClientOpts, CommandTopic: true,
		SchemaRegistry: schemas, ConnectURL: c.ConnectURL, UDFDir: c.UDFDir,
		OnPartitionsChange: changed, LiveInstances: live, Owners: func(id string) []engine.Owner {
			if r := instances.Load(); r != nil {
				return ownersOf(r, id)
			}
			return nil
		}})
	if err != nil {
		return err
	}
	if err := reg.Watch(e); err != nil {
		_ = e.Close()
		return fmt.Errorf("metrics: %w", err)
	}
	if script != "" {
		if err := runScript(ctx, e, script); err != nil {
			_ = e.Close()
			return &exitError{2, fmt.Sprintf("%s: %s", c.File, engine.FormatError(script, err))}
		}
	}
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		_ = e.Close()
		return fmt.Errorf("listen on %s: %w", c.Listen, err)
	}
	scheme := "http"
	if c.TLSCert != "" {
		scheme = "https"
	}
	advertised, err := advertisedURL(c.Advertise, scheme, ln.Addr())
	if err != nil {
		_ = ln.Close()
		_ = e.Close()
		return &exitError{2, "sluice server: " + err.Error()}
	}
	ir, err := cluster.Start(ctx, cluster.Config{ConnOpts: connOpts, ServiceID: c.ServiceID, InstanceID: e.InstanceID(), URL: advertised, Log: log,
		Local:         func() map[string][]cluster.Partition { return cluster.EnginePartitions(e) },
		LocalStandbys: func() map[string][]cluster.Partition { return cluster.EngineStandbys(e) },
		OnInstances:   func(ins []cluster.Instance) { cluster.ApplyStandbys(e, ins) }})
	if err != nil {
		_ = ln.Close()
		_ = e.Close()
		return err
	}
	instances.Store(ir)
	opts := server.Options{Users: users, TLSCertFile: c.TLSCert, TLSKeyFile: c.TLSKey, Log: log, Cluster: ir}
	if len(c.Auth) > 0 {
		// The other instances of the service are configured alike, so
		// the first credentials open their doors too.
		opts.ForwardUser, opts.ForwardPassword, _ = strings.Cut(c.Auth[0], ":")
	}
	srv := server.New(e, opts)
	srv.Handle("GET /metrics", reg.Handler())
	var pg *pgwire.Server
	var pgLn net.Listener
	if c.PGListen != "" {
		if pg, pgLn, err = c.startPG(srv, users, log); err != nil {
			_ = ln.Close()
			_ = e.Close()
			_ = ir.Close()
			return err
		}
	}
	// Scripts and tests wait for this line to learn the address.
	fmt.Printf("sluice server listening on %s://%s\n", scheme, ln.Addr())
	status(log, "advertised as %s to the other instances of service %s", advertised, c.ServiceID)
	serveErr := make(chan error, 2)
	go func() { serveErr <- srv.Serve(ln) }()
	if pg != nil {
		go func() {
			if err := pg.Serve(pgLn); err != nil {
				serveErr <- err
			}
		}()
	}

	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-serveErr:
	}
	stop()
	shutCtx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if pg != nil {
		// Postgres sessions end first: their push queries and cursors
		// stop before the engine closes.
		if err := pg.Shutdown(shutCtx); err != nil && runErr == nil {
			runErr = fmt.Errorf("postgres shutdown: %w", err)
		}
	}
	if err := srv.Shutdown(shutCtx); err != nil && runErr == nil {
		runErr = err
	}
	// Queries stop after the HTTP side: outputs flushed, state and
	// offsets committed.
	if err := e.Close(); err != nil && runErr == nil {
		runErr = err
	}
	// Last, once this instance owns nothing: the others forget it.
	instances.Store(nil)
	if err := ir.Close(); err != nil && runErr == nil {
		runErr = err
	}
	log.Info("server stopped")
	return runErr
}

// startPG listens for Postgres clients on --pg-listen, with the REST
// API's users and TLS files, and says where on the start lines.
func (c *serverCmd) startPG(srv *server.Server, users map[string]string, log *slog.Logger) (*pgwire.Server, net.Listener, error) {
	opts := pgwire.Options{Users: users, AuthMethod: c.PGAuth, Version: srv.Version(), Log: log}
	if c.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey)
		if err != nil {
			return nil, nil, &exitError{2, fmt.Sprintf("sluice server: --tls-cert/--tls-key: %v", err)}
		}
		opts.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	pg, err := pgwire.New(srv.PGBackend(), opts)
	if err != nil {
		return nil, nil, &exitError{2, "sluice server: " + err.Error()}
	}
	ln, err := net.Listen("tcp", c.PGListen)
	if err != nil {
		return nil, nil, fmt.Errorf("listen on %s (--pg-listen): %w", c.PGListen, err)
	}
	tlsText, auth := "off", "trust"
	if opts.TLS != nil {
		tlsText = "required"
	}
	if len(users) > 0 {
		auth = c.PGAuth
	}
	// Scripts and tests wait for this line to learn the address.
	fmt.Printf("postgres: listening on %s (tls %s, auth %s)\n", ln.Addr(), tlsText, auth)
	return pg, ln, nil
}

// advertisedURL is the URL other instances reach this one at: flag when
// given, else scheme://addr with this host's name for a wildcard address.
func advertisedURL(flag, scheme string, addr net.Addr) (string, error) {
	if flag != "" {
		u, err := url.Parse(flag)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", fmt.Errorf("--advertised-url %q: want http(s)://host:port", flag)
		}
		return strings.TrimSuffix(flag, "/"), nil
	}
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "", fmt.Errorf("listen address %s: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if host, err = os.Hostname(); err != nil {
			return "", fmt.Errorf("host name for --advertised-url: %w", err)
		}
	}
	return scheme + "://" + net.JoinHostPort(host, port), nil
}

// runScript executes the --file statements; push queries have no reader
// at start, so they are refused.
func runScript(ctx context.Context, e *engine.Engine, script string) error {
	stmts, err := parser.ParseScript(script)
	if err != nil {
		return err
	}
	for _, p := range stmts {
		if _, ok := p.Stmt.(*parser.Select); ok {
			return &engine.StatementError{Statement: p.Text, Err: errors.New("push queries cannot run from --file; send them to /query-stream")}
		}
		if _, err := e.ExecuteStatement(ctx, p); err != nil {
			if _, create := p.Stmt.(*parser.CreateSource); create && errors.Is(err, planner.ErrExists) {
				// The catalog kept in the command topic has it from an
				// earlier start: --file runs once per service, not per
				// process.
				continue
			}
			if _, create := p.Stmt.(*parser.CreateConnector); create && errors.Is(err, engine.ErrConnectorExists) {
				// Kafka Connect has it from an earlier start, likewise.
				continue
			}
			return err
		}
	}
	return nil
}

func parseUsers(auth []string) (map[string]string, error) {
	users := map[string]string{}
	for _, a := range auth {
		user, pass, ok := strings.Cut(a, ":")
		if !ok || user == "" {
			return nil, fmt.Errorf("--auth %q: want USER:PASSWORD", a)
		}
		users[user] = pass
	}
	return users, nil
}

// kafkaOpts builds the TLS and SASL options of the Kafka connection.
func (c *serverCmd) kafkaOpts() ([]kgo.Opt, error) {
	var opts []kgo.Opt
	if c.KafkaTLS {
		opts = append(opts, kgo.DialTLSConfig(&tls.Config{MinVersion: tls.VersionTLS12}))
	}
	var mech sasl.Mechanism
	switch c.SASLMechanism {
	case "":
		if c.SASLUser != "" {
			return nil, errors.New("--sasl-user needs --sasl-mechanism")
		}
		return opts, nil
	case "PLAIN":
		mech = plain.Auth{User: c.SASLUser, Pass: c.SASLPassword}.AsMechanism()
	case "SCRAM-SHA-256":
		mech = scram.Auth{User: c.SASLUser, Pass: c.SASLPassword}.AsSha256Mechanism()
	case "SCRAM-SHA-512":
		mech = scram.Auth{User: c.SASLUser, Pass: c.SASLPassword}.AsSha512Mechanism()
	}
	if c.SASLUser == "" {
		return nil, fmt.Errorf("--sasl-mechanism %s needs --sasl-user and --sasl-password", c.SASLMechanism)
	}
	return append(opts, kgo.SASL(mech)), nil
}

// ownersOf lists what each instance the registry knows holds of query id.
func ownersOf(r *cluster.Registry, id string) []engine.Owner {
	var out []engine.Owner
	for _, in := range r.Instances() {
		parts, standbys := in.Queries[id], in.Standbys[id]
		if len(parts) == 0 && len(standbys) == 0 && !in.Self {
			continue
		}
		o := engine.Owner{Instance: in.ID, URL: in.URL, Self: in.Self, Alive: in.Alive}
		for _, p := range parts {
			o.Partitions = append(o.Partitions, fmt.Sprintf("%s/%d %s", p.Topic, p.Partition, p.State))
		}
		for _, p := range standbys {
			o.Standbys = append(o.Standbys, fmt.Sprintf("%s/%d", p.Topic, p.Partition))
		}
		out = append(out, o)
	}
	return out
}
