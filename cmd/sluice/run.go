package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/shell"
	"github.com/sluice-sql/sluice/types"
)

type runCmd struct {
	File      string   `arg:"" help:"SQL file to run." type:"existingfile"`
	Brokers   []string `sep:"," env:"SLUICE_BROKERS" help:"Kafka bootstrap servers (host:port,…). Without them Sluice starts its embedded broker."`
	DataDir   string   `name:"data-dir" default:"./sluice-data" env:"SLUICE_DATA_DIR" help:"Directory for local state (and the embedded broker's data)."`
	ServiceID string   `name:"service-id" default:"default" env:"SLUICE_SERVICE_ID" help:"Service id: instances with the same id share queries."`
	embeddedBrokerFlags
	registryFlags
	connectFlags
	udfDirFlag
}

func (c *runCmd) Run(log *slog.Logger) error {
	src, err := os.ReadFile(c.File)
	if err != nil {
		return &exitError{2, fmt.Sprintf("sluice run: %v", err)}
	}
	text := string(src)
	// Syntax errors stop the run before anything starts, unless the file
	// uses variables: a statement is then parsed once the DEFINEs before
	// it have run.
	if _, err := parser.ParseScript(text); err != nil && !strings.Contains(text, "${") {
		return &exitError{2, fmt.Sprintf("%s: %s", c.File, engine.FormatError(text, err))}
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
	}
	reg, served, closeReg, err := c.schemaRegistry(len(c.Brokers) == 0, c.DataDir, log)
	if err != nil {
		return err
	}
	defer closeReg()
	announceRegistry(log, served)
	c.announceConnect(log)
	e, err := engine.Open(ctx, engine.Config{ConnOpts: kafkaConn(brokers, false), DataDir: c.DataDir, ServiceID: c.ServiceID, Log: log,
		OnRestoreProgress: restoreProgress(), SchemaRegistry: reg, ConnectURL: c.ConnectURL, UDFDir: c.UDFDir})
	if err != nil {
		return err
	}
	var printers sync.WaitGroup
	var streams []*engine.RowStream
	out := &syncWriter{w: os.Stdout}
	show := func(res *engine.Result) {
		switch {
		case res.Rows != nil:
			streams = append(streams, res.Rows)
			printers.Add(1)
			go func() {
				defer printers.Done()
				printRows(out, res.Rows)
			}()
		case res.Message != "":
			status(log, "%s", res.Message)
		case res.Entity != nil:
			// Laid out as the shell lays it out, so a result reads the
			// same in a run and in the shell.
			var b strings.Builder
			shell.WriteEntity(&b, parsedOf(res.Statement), res.Entity)
			out.write(b.String())
		}
	}
	// runFile runs a file's statements in order; RUN SCRIPT runs another
	// file (a path relative to the one naming it) in the same session.
	var runFile func(file, text string, depth int) error
	runScript := func(from, path string, depth int) error {
		if !filepath.IsAbs(path) {
			path = filepath.Join(filepath.Dir(from), path)
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return &exitError{2, fmt.Sprintf("%s: RUN SCRIPT: %v", from, err)}
		}
		return runFile(path, string(src), depth+1)
	}
	runFile = func(file, text string, depth int) error {
		if depth > maxScriptDepth {
			return &exitError{2, fmt.Sprintf("%s: RUN SCRIPT nests deeper than %d files", file, maxScriptDepth)}
		}
		stmts, err := parser.ParseScript(text)
		if err != nil {
			// Variables: statement by statement, substituted first.
			texts, rest := parser.SplitStatements(text)
			if strings.TrimSpace(rest) != "" {
				texts = append(texts, rest)
			}
			for _, t := range texts {
				if ps, err := parser.ParseScript(t); err == nil && len(ps) == 1 {
					if rs, ok := ps[0].Stmt.(*parser.RunScript); ok {
						if err := runScript(file, rs.Path, depth); err != nil {
							return err
						}
						continue
					}
				}
				results, err := e.Execute(ctx, t)
				if err != nil {
					return &exitError{2, fmt.Sprintf("%s: %s", file, engine.FormatError(t, err))}
				}
				for _, r := range results {
					show(r)
				}
			}
			return nil
		}
		for _, p := range stmts {
			if rs, ok := p.Stmt.(*parser.RunScript); ok {
				if err := runScript(file, rs.Path, depth); err != nil {
					return err
				}
				continue
			}
			res, err := e.ExecuteStatement(ctx, p)
			if err != nil {
				return &exitError{2, fmt.Sprintf("%s: %s", file, engine.FormatError(text, err))}
			}
			show(res)
		}
		return nil
	}
	runErr := runFile(c.File, text, 0)
	if runErr == nil {
		<-ctx.Done()
	}
	for _, s := range streams {
		s.Close()
	}
	printers.Wait()
	queries := e.Queries()
	if err := e.Close(); err != nil && runErr == nil {
		runErr = err
	}
	lateSummary(log, queries)
	return runErr
}

// parsedOf is a result's statement parsed again, which WriteEntity reads
// (EXPLAIN of a query id prints the query's statement first); the
// engine ran it, so it parses.
func parsedOf(text string) parser.Parsed {
	st, _ := parser.ParseOne(text)
	return parser.Parsed{Stmt: st, Text: text}
}

// lateSummary says, once the queries have stopped, how many records each
// dropped as late: a run shows no metrics, and only the first drop is
// logged (at INFO), so without it drops would go unnoticed.
func lateSummary(log *slog.Logger, queries []*engine.Query) {
	for _, q := range queries {
		if q.Metrics == nil {
			continue
		}
		if n := q.Metrics.LateDropped.Load(); n > 0 {
			status(log, "query %s dropped %d late %s (after the grace period)", q.ID, n, plural(n, "record", "records"))
		}
	}
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// maxScriptDepth bounds RUN SCRIPT nesting, so a script that runs itself
// stops with an error.
const maxScriptDepth = 16

// syncWriter lets several push queries print whole lines without
// interleaving them.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) write(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _ = io.WriteString(s.w, text)
}

// printRows prints a push query's rows as a table as they arrive: the
// header once, then one line per row.
func printRows(out *syncWriter, rows *engine.RowStream) {
	widths := make([]int, len(rows.Columns.Columns))
	var header, rule strings.Builder
	rule.WriteString("+")
	header.WriteString("|")
	for i, col := range rows.Columns.Columns {
		widths[i] = max(len(col.Name), minWidth(col.Type))
		rule.WriteString(strings.Repeat("-", widths[i]+2) + "+")
		fmt.Fprintf(&header, " %-*s |", widths[i], col.Name)
	}
	out.write(rule.String() + "\n" + header.String() + "\n" + rule.String() + "\n")
	for row := range rows.C {
		var line strings.Builder
		line.WriteString("|")
		for i, v := range row.Cols {
			fmt.Fprintf(&line, " %-*s |", widths[i], types.FormatValue(v))
		}
		out.write(line.String() + "\n")
	}
}

// minWidth fits typical values: epoch millis need 13 digits.
func minWidth(t types.Type) int {
	if t.Kind == types.BigInt || t.Kind == types.Timestamp {
		return 13
	}
	return 10
}

// kafkaConn is how every command reaches Kafka's brokers. A connection the
// broker closes before answering its first request is retried as any
// other broken connection is. franz-go does not retry it by default
// because with SASL it usually means refused credentials; without SASL it
// is a broker going away — a leader killed or restarted while a fresh
// connection's request (a CREATE's CreateTopics, which opens a connection
// of its own) was in flight — and failing the statement there would stop
// a `sluice run` over a fault the cluster recovers from in seconds.
func kafkaConn(brokers []string, sasl bool) []kgo.Opt {
	opts := []kgo.Opt{kgo.SeedBrokers(brokers...)}
	if !sasl {
		opts = append(opts, kgo.AlwaysRetryEOF())
	}
	return opts
}
