package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/sluice-sql/sluice/broker"
	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/shell"
)

type shellCmd struct {
	Server    string   `env:"SLUICE_SERVER" placeholder:"URL" help:"Client of a sluice server at URL (http://host:8088; user:password@ in it works too) instead of an engine in this process."`
	User      string   `env:"SLUICE_USER" help:"User for the server's Basic authentication."`
	Password  string   `env:"SLUICE_PASSWORD" help:"Password for the server's Basic authentication."`
	Brokers   []string `sep:"," env:"SLUICE_BROKERS" help:"Kafka bootstrap servers (host:port,…) of the embedded engine. Without them Sluice starts its embedded broker."`
	DataDir   string   `name:"data-dir" default:"./sluice-data" env:"SLUICE_DATA_DIR" help:"Directory for local state (and the embedded broker's data)."`
	ServiceID string   `name:"service-id" default:"default" env:"SLUICE_SERVICE_ID" help:"Service id of the embedded engine."`
	embeddedBrokerFlags
	registryFlags
	connectFlags
	udfDirFlag
	Execute string `short:"e" placeholder:"STATEMENTS" help:"Run these statements and exit (non-zero on the first error)."`
}

func (c *shellCmd) Run(log *slog.Logger) error {
	ctx := context.Background()
	// Without a terminal on both ends (a script on stdin, output to a
	// pipe, or -e) the shell prints no prompt, banner or progress and
	// stops at the first error.
	interactive := c.Execute == "" && term.IsTerminal(int(os.Stdin.Fd())) && term.IsTerminal(int(os.Stdout.Fd()))
	be, where, err := c.backend(ctx, log, interactive)
	if err != nil {
		return err
	}
	defer be.Close()

	var sh *shell.Shell
	var lines shell.LineReader
	switch {
	case c.Execute != "":
		lines = shell.NewPlainReader(strings.NewReader(c.Execute))
	case interactive:
		hist, err := shell.HistoryFile()
		if err != nil {
			log.Warn("no history", "err", err)
		}
		lines, err = shell.NewEditor(hist,
			func(pending, line string) ([]string, string) { return sh.Complete(pending, line) },
			func() string { return sh.Pending() })
		if err != nil {
			return err
		}
		if w := shell.LogWriter(lines); w != nil {
			logOutput.set(w)
			defer logOutput.set(nil)
		}
	default:
		lines = shell.NewPlainReader(os.Stdin)
	}
	defer lines.Close()
	sh = shell.New(shell.Options{Backend: be, Lines: lines, Out: os.Stdout, Err: os.Stderr, Interactive: interactive})
	if interactive {
		fmt.Printf("Sluice shell: %s.\nStatements end with ';'. Type help for help, Ctrl-D to leave.\n\n", where)
	}
	err = sh.Run(ctx)
	var se *shell.StatementError
	if errors.As(err, &se) {
		// Already printed; exit 2 like `sluice run` on bad statements.
		return &exitError{code: 2}
	}
	if errors.Is(err, shell.ErrInterrupted) {
		return &exitError{code: 130}
	}
	return err
}

// backend connects to the server, or starts an engine (and the embedded
// broker when no brokers are named). where says what for the banner.
func (c *shellCmd) backend(ctx context.Context, log *slog.Logger, interactive bool) (shell.Backend, string, error) {
	if c.Server != "" {
		if c.UDFDir != "" {
			// The functions would load into no engine: the server's
			// own --udf-dir is what its queries call.
			return nil, "", &exitError{2, "sluice shell: --udf-dir loads functions into the shell's own engine; with --server, give it to sluice server"}
		}
		r, err := shell.NewRemote(c.Server, c.User, c.Password)
		if err != nil {
			return nil, "", &exitError{2, fmt.Sprintf("sluice shell: %v", err)}
		}
		if err := r.Ping(ctx); err != nil {
			return nil, "", fmt.Errorf("connect to %s: %w", c.Server, err)
		}
		return r, "connected to " + c.Server, nil
	}
	brokers := c.Brokers
	var b *broker.Broker
	where := "Kafka at " + strings.Join(brokers, ",")
	if len(brokers) == 0 {
		var err error
		// The interactive banner names the broker; a script is silent.
		b, err = c.startBroker(c.DataDir, log, false)
		if err != nil {
			return nil, "", err
		}
		brokers = []string{b.Addr()}
		where = fmt.Sprintf("embedded engine on the embedded broker %s (data in %s)", b.Addr(), c.DataDir)
	}
	// The catalog lives in the service's command topic, as with a server:
	// streams, tables and queries made in one shell session are there in
	// the next one with the same broker and service id.
	// Like the embedded broker's address, the registry's is told only in
	// the interactive banner: a script's stdout and stderr carry only
	// what its statements print.
	schemas, served, closeSchemas, err := c.schemaRegistry(b != nil, c.DataDir, log)
	if err != nil {
		if b != nil {
			b.Close()
		}
		return nil, "", err
	}
	if served != "" {
		where += ", schema registry on " + served
	}
	if c.ConnectURL != "" {
		where += ", Kafka Connect at " + c.shownConnect()
	}
	cfg := engine.Config{ConnOpts: kafkaConn(brokers, false), DataDir: c.DataDir, ServiceID: c.ServiceID, Log: log, CommandTopic: true,
		SchemaRegistry: schemas, ConnectURL: c.ConnectURL, UDFDir: c.UDFDir}
	if interactive {
		cfg.OnRestoreProgress = restoreProgress()
	}
	e, err := engine.Open(ctx, cfg)
	if err != nil {
		closeSchemas()
		if b != nil {
			b.Close()
		}
		return nil, "", err
	}
	return &embeddedBackend{Embedded: shell.NewEmbedded(e, cfg.ConnOpts), broker: b, closeSchemas: closeSchemas}, where, nil
}

// embeddedBackend closes the embedded registry and broker after the
// engine.
type embeddedBackend struct {
	*shell.Embedded
	broker       *broker.Broker
	closeSchemas func()
}

func (b *embeddedBackend) Close() error {
	err := b.Embedded.Close()
	b.closeSchemas()
	if b.broker != nil {
		b.broker.Close()
	}
	return err
}
