// Command sluice is the one Sluice binary: an interactive SQL shell, run a SQL file against Kafka,
// serve ksqlDB's REST API, run the embedded broker, or run ksqlDB-format test files offline.
package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"sync"

	"github.com/alecthomas/kong"
)

// cli is the command line. Every flag can also come from a SLUICE_*
// environment variable.
type cli struct {
	LogLevel   string `name:"log-level" env:"SLUICE_LOG_LEVEL" default:"warn" enum:"debug,info,warn,error" help:"Log level (${enum})."`
	LogFormat  string `name:"log-format" env:"SLUICE_LOG_FORMAT" default:"text" enum:"text,json" help:"Log format (${enum}): json writes one object a line, with the query id as a field, for log pipelines."`
	CPUProfile string `name:"cpuprofile" env:"SLUICE_CPUPROFILE" type:"path" help:"Write a pprof CPU profile of the whole process to this file (for docs/benchmarks.md and the bench harness)."`
	MemProfile string `name:"memprofile" env:"SLUICE_MEMPROFILE" type:"path" help:"Write a pprof heap profile to this file each time the live heap reaches a new high, so it shows the process at its largest (for the memory targets in docs/benchmarks.md)."`

	Shell  shellCmd  `cmd:"" default:"withargs" help:"The interactive SQL shell (the default command): an engine in this process, or a client of a sluice server with --server."`
	Run    runCmd    `cmd:"" help:"Run the statements of a SQL file and keep its queries running until Ctrl-C."`
	Server serverCmd `cmd:"" help:"Serve ksqlDB's REST API (/ksql, /query-stream, /inserts-stream, …) over the engine until Ctrl-C or SIGTERM."`
	Broker brokerCmd `cmd:"" help:"Run the embedded Kafka-protocol broker on its own."`
	Test   testCmd   `cmd:"" help:"Run ksqlDB test files (query-validation tests or ksql-test-runner inputs) offline."`
}

// exitError carries a process exit code out of a command.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func main() {
	var c cli
	parser, err := kong.New(&c, kong.Name("sluice"),
		kong.Description("Sluice: streaming SQL for Kafka."),
		kong.UsageOnError(),
		kong.Configuration(kong.JSON))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, err := parser.Parse(os.Args[1:])
	if err != nil {
		parser.Errorf("%s", err)
		os.Exit(2)
	}
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.LogLevel))
	var handler slog.Handler = slog.NewTextHandler(logOutput, &slog.HandlerOptions{Level: level})
	if c.LogFormat == "json" {
		handler = slog.NewJSONHandler(logOutput, &slog.HandlerOptions{Level: level})
		jsonLogs = true
	}
	log := slog.New(handler)
	slog.SetDefault(log)
	setGCPercent()
	stopProfile, err := startCPUProfile(c.CPUProfile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice:", err)
		os.Exit(2)
	}
	stopHeapProfile, err := startHeapProfile(c.MemProfile)
	if err != nil {
		stopProfile()
		fmt.Fprintln(os.Stderr, "sluice:", err)
		os.Exit(2)
	}
	err = ctx.Run(log)
	stopHeapProfile()
	stopProfile()
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			if ee.msg != "" {
				fmt.Fprintln(os.Stderr, ee.msg)
			}
			os.Exit(ee.code)
		}
		fmt.Fprintln(os.Stderr, "sluice:", err)
		os.Exit(1)
	}
}

// setGCPercent collects garbage when the heap has grown by half of what
// is live, not Go's default of all of it, unless GOGC says otherwise.
// Most of a query's live heap lasts (Badger's memtables and block cache,
// fetched batches, buffered output), so at the default the process holds
// about twice that. In the million-bid Nexmark aggregation the
// collector's share of the CPU went from 2% to 6%, at the same speed,
// and peak RSS from 201 to 156 MB (docs/benchmarks.md, M1 and M2).
func setGCPercent() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(50)
	}
}

// startCPUProfile starts a CPU profile into file (none when file is
// empty); the returned function stops it and closes the file.
func startCPUProfile(file string) (func(), error) {
	if file == "" {
		return func() {}, nil
	}
	f, err := os.Create(file)
	if err != nil {
		return nil, fmt.Errorf("cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// logOutput is where log entries go: stderr, or while the interactive
// shell edits a line, the line editor's writer for it, which clears the
// prompt, writes the entry and draws the prompt and the line typed so far
// again below it (an entry written straight to stderr would land in the
// middle of the line being typed).
var logOutput = &switchWriter{}

// switchWriter writes to a writer that can be replaced while others
// write; nil means stderr.
type switchWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *switchWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil {
		return os.Stderr.Write(p)
	}
	return s.w.Write(p)
}

// set makes later entries go to w (nil: stderr).
func (s *switchWriter) set(w io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w = w
}

// jsonLogs is set by --log-format json: stderr then carries only log
// entries, so status lines become entries too.
var jsonLogs bool

// status tells the user what happened (a statement's outcome, where the
// embedded broker listens): a plain line on stderr, or with JSON logs an
// info entry, so that every stderr line stays machine-readable.
func status(log *slog.Logger, format string, args ...any) {
	if jsonLogs {
		log.Info(fmt.Sprintf(format, args...))
		return
	}
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}
