package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgloadCmd is `bench pgload`: the Postgres front door under load (issue
// 37). Sessions clients, each a pgx connection of its own, run pull queries
// by key with a parameter ($1, pgx's cached prepared statement, as
// applications send them) for the duration, against a table the command
// creates and fills over the same protocol.
type pgloadCmd struct {
	Sessions int           `default:"50" help:"Concurrent Postgres sessions, each its own connection."`
	Duration time.Duration `help:"How long the sessions run pull queries (default 30s; 10s with --quick)."`
	Keys     int           `default:"1000" help:"Rows of the table the queries read: keys 0..keys-1."`
	PG       string        `name:"pg" placeholder:"HOST:PORT" help:"A running sluice server's Postgres listener (--pg-listen) to load; default: start one (sluice server --pg-listen on a free port) over the bench's broker."`
	User     string        `default:"bench" help:"User of the Postgres sessions (the started server gets --auth USER:PASSWORD)."`
	Password string        `default:"bench" help:"Its password."`
	Sluice   string        `type:"path" help:"sluice binary to start (default: built from ../cmd/sluice into a temp dir)."`
}

// pgloadQuery is the pull query every session runs, by key.
const pgloadQuery = "SELECT ID, NAME, AMOUNT FROM %s WHERE ID = $1"

func (p *pgloadCmd) Run(ctx context.Context, c *cli) error {
	if p.Duration == 0 {
		p.Duration = 30 * time.Second
		if c.Quick {
			p.Duration = 10 * time.Second
		}
	}
	if p.Sessions < 1 || p.Keys < 1 || p.Duration <= 0 {
		return errors.New("--sessions, --keys and --duration must be positive")
	}
	addr := p.PG
	server := "a running server at " + addr
	if addr == "" {
		env, err := setUp(ctx, "pgload", &p.Sluice, c.Brokers)
		if err != nil {
			return err
		}
		defer env.Close()
		stop, a, err := p.startServer(ctx, env)
		if err != nil {
			return err
		}
		defer func() {
			if err := stop(); err != nil {
				fmt.Fprintln(os.Stderr, "pgload:", err)
			}
		}()
		addr = a
		server = fmt.Sprintf("sluice server --pg-listen %s, broker %s", addr, env.cl.Name)
	}
	fmt.Printf("pgload: %d sessions, %s of pull queries by key over %d keys, %s\n", p.Sessions, p.Duration, p.Keys, server)
	fmt.Printf("machine: %s\n", machine())
	fmt.Printf("load before: %s\n\n", loadAvg())

	src, table, err := p.fill(ctx, addr)
	if err != nil {
		return err
	}
	// A running server keeps what a run made unless it is dropped.
	defer func() {
		if err := p.drop(addr, src, table); err != nil {
			fmt.Fprintln(os.Stderr, "pgload:", err)
		}
	}()
	rep, err := p.load(ctx, addr, table)
	if err != nil {
		return err
	}
	fmt.Printf("load after: %s\n\n", loadAvg())
	rep.print()
	if rep.errors > 0 {
		fmt.Printf("first error: %v\n", rep.firstErr)
	}

	// Only a full run writes results.json: the defaults, on a server the
	// command started itself (a running one's settings are unknown).
	if c.Quick || p.PG != "" || p.Sessions != 50 || p.Duration != 30*time.Second {
		fmt.Println("\nnot a full run (--quick, --pg, or other sessions or duration): results.json is left alone")
		return nil
	}
	// Issue 37 asks for the figure and for no errors; it sets no latency
	// target: target 0 says so.
	if err := mergeResults(c.Results, map[string]result{
		"PG-pull-p50-ms": {Value: round3(ms(rep.quantile(0.50)))},
		"PG-pull-p99-ms": {Value: round3(ms(rep.quantile(0.99)))},
		"PG-pull-max-ms": {Value: round3(ms(rep.max()))},
		"PG-pull-qps":    {Value: round3(rep.qps())},
		"PG-pull-errors": {Value: float64(rep.errors)},
	}); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	fmt.Printf("\nwrote %s\n", c.Results)
	if rep.errors > 0 {
		return fmt.Errorf("%d queries failed", rep.errors)
	}
	return nil
}

// startServer starts `sluice server` with its Postgres listener on a free
// loopback port and returns how to stop it and the listener's address once
// it accepts connections.
func (p *pgloadCmd) startServer(ctx context.Context, env *benchEnv) (func() error, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	addr := ln.Addr().String()
	ln.Close()
	svc := fmt.Sprintf("pgload-%d", time.Now().UnixNano())
	cmd := exec.Command(p.Sluice, "server", "--listen", "127.0.0.1:0", "--pg-listen", addr,
		"--brokers", strings.Join(env.cl.Seeds, ","), "--service-id", svc,
		"--data-dir", filepath.Join(env.tmp, "data"), "--auth", p.User+":"+p.Password)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = nil, &stderr
	cmd.Env = append(os.Environ(), "SLUICE_LOG_LEVEL=warn")
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("start sluice server: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() error {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				return fmt.Errorf("sluice server: %w; stderr:\n%s", err, stderr.String())
			}
			return nil
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			return fmt.Errorf("sluice server still ran 30 s after SIGTERM; killed")
		}
	}
	deadline := time.Now().Add(time.Minute)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return stop, addr, nil
		}
		select {
		case err := <-exited:
			return nil, "", fmt.Errorf("sluice server exited before listening on %s: %v; stderr:\n%s", addr, err, stderr.String())
		case <-ctx.Done():
			_ = stop()
			return nil, "", ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = stop()
			return nil, "", fmt.Errorf("sluice server does not accept connections on %s after a minute; stderr:\n%s", addr, stderr.String())
		}
	}
}

func (p *pgloadCmd) connString(addr string) string {
	host, port, _ := net.SplitHostPort(addr)
	return fmt.Sprintf("host=%s port=%s user=%s password=%s dbname=sluice sslmode=disable application_name=bench-pgload",
		host, port, p.User, p.Password)
}

// fill creates, over the Postgres protocol, a stream to insert into and a
// source table over the same topic (materialised from the topic's start,
// as a table's changelog is), inserts one row per key and waits until a
// pull query reads every key back with its values. It returns the
// stream's and the table's names.
func (p *pgloadCmd) fill(ctx context.Context, addr string) (src, table string, err error) {
	conn, err := pgx.Connect(ctx, p.connString(addr))
	if err != nil {
		return "", "", fmt.Errorf("connect to %s: %w", addr, err)
	}
	defer conn.Close(context.Background())
	suffix := time.Now().UnixNano()
	src, table = fmt.Sprintf("PGLOAD_SRC_%d", suffix), fmt.Sprintf("PGLOAD_%d", suffix)
	ddl := []string{
		fmt.Sprintf(`CREATE STREAM %[1]s (ID INT KEY, NAME STRING, AMOUNT DOUBLE) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=2);`, src),
		fmt.Sprintf(`CREATE SOURCE TABLE %[2]s (ID INT PRIMARY KEY, NAME STRING, AMOUNT DOUBLE) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON');`, src, table),
	}
	// Exec without arguments sends a simple Query, one statement each.
	for _, st := range ddl {
		if _, err := conn.Exec(ctx, st); err != nil {
			return "", "", fmt.Errorf("%s: %w", st, err)
		}
	}
	start := time.Now()
	for k := range p.Keys {
		st := fmt.Sprintf("INSERT INTO %s (ID, NAME, AMOUNT) VALUES (%d, '%s', %s);", src, k, pgloadName(k), pgloadAmount(k))
		if _, err := conn.Exec(ctx, st); err != nil {
			return "", "", fmt.Errorf("%s: %w", st, err)
		}
	}
	fmt.Printf("filled %d keys in %s; ", p.Keys, time.Since(start).Round(time.Millisecond))
	// Every key once, until each answers with its row: the table is
	// materialised and the harness's reading of rows is right.
	query := fmt.Sprintf(pgloadQuery, table)
	deadline := time.Now().Add(2 * time.Minute)
	for k := 0; k < p.Keys; {
		err := pgloadCheck(ctx, conn, query, k)
		switch {
		case err == nil:
			k++
			continue
		case !errors.Is(err, errNoRow):
			return "", "", fmt.Errorf("reading key %d back: %w", k, err)
		case time.Now().After(deadline):
			return "", "", fmt.Errorf("key %d is not in %s two minutes after the inserts", k, table)
		}
		select {
		case <-ctx.Done():
			return "", "", ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	fmt.Printf("every key read back after %s\n", time.Since(start).Round(time.Millisecond))
	return src, table, nil
}

// drop removes the table and the stream with its topic.
func (p *pgloadCmd) drop(addr, src, table string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, p.connString(addr))
	if err != nil {
		return fmt.Errorf("connect to %s to drop %s and %s: %w", addr, table, src, err)
	}
	defer conn.Close(context.Background())
	for _, st := range []string{"DROP TABLE " + table + ";", "DROP STREAM " + src + " DELETE TOPIC;"} {
		if _, err := conn.Exec(ctx, st); err != nil {
			return fmt.Errorf("%s: %w", st, err)
		}
	}
	return nil
}

func pgloadName(k int) string   { return fmt.Sprintf("name-%d", k) }
func pgloadAmount(k int) string { return fmt.Sprintf("%d.5", k) }

var errNoRow = errors.New("no row")

// pgloadCheck runs the pull query for key k and checks its one row.
func pgloadCheck(ctx context.Context, conn *pgx.Conn, query string, k int) error {
	rows, err := conn.Query(ctx, query, int32(k))
	if err != nil {
		return err
	}
	var id int32
	var name string
	var amount float64
	n := 0
	for rows.Next() {
		if err := rows.Scan(&id, &name, &amount); err != nil {
			rows.Close()
			return err
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	switch {
	case n == 0:
		return errNoRow
	case n > 1:
		return fmt.Errorf("key %d: %d rows", k, n)
	case int(id) != k || name != pgloadName(k) || fmt.Sprintf("%.1f", amount) != pgloadAmount(k):
		return fmt.Errorf("key %d: row (%d, %q, %v), want (%d, %q, %s)", k, id, name, amount, k, pgloadName(k), pgloadAmount(k))
	}
	return nil
}

// pgloadReport is every query's latency and the errors of one load run.
type pgloadReport struct {
	sessions  int
	elapsed   time.Duration
	latencies []time.Duration // sorted
	errors    int
	firstErr  error
}

// load runs the sessions for the duration; each connects first (the
// connections are not timed), then runs the pull query for random keys
// back to back.
func (p *pgloadCmd) load(ctx context.Context, addr, table string) (*pgloadReport, error) {
	conns := make([]*pgx.Conn, p.Sessions)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close(context.Background())
			}
		}
	}()
	for i := range conns {
		c, err := pgx.Connect(ctx, p.connString(addr))
		if err != nil {
			return nil, fmt.Errorf("session %d: connect: %w", i, err)
		}
		conns[i] = c
	}
	query := fmt.Sprintf(pgloadQuery, table)
	rep := &pgloadReport{sessions: p.Sessions}
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(p.Duration)
	for i, conn := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), uint64(start.UnixNano())))
			var lat []time.Duration
			errs := 0
			var first error
			for time.Now().Before(end) && ctx.Err() == nil {
				k := rng.IntN(p.Keys)
				t0 := time.Now()
				err := pgloadCheck(ctx, conn, query, k)
				lat = append(lat, time.Since(t0))
				if err != nil {
					errs++
					if first == nil {
						first = fmt.Errorf("session %d, key %d: %w", i, k, err)
					}
				}
			}
			mu.Lock()
			defer mu.Unlock()
			rep.latencies = append(rep.latencies, lat...)
			rep.errors += errs
			if rep.firstErr == nil {
				rep.firstErr = first
			}
		}()
	}
	wg.Wait()
	rep.elapsed = time.Since(start)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	slices.Sort(rep.latencies)
	return rep, nil
}

func (r *pgloadReport) quantile(q float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	i := int(q*float64(len(r.latencies))+0.5) - 1
	return r.latencies[min(max(i, 0), len(r.latencies)-1)]
}

func (r *pgloadReport) max() time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	return r.latencies[len(r.latencies)-1]
}

func (r *pgloadReport) qps() float64 { return float64(len(r.latencies)) / r.elapsed.Seconds() }

func (r *pgloadReport) print() {
	fmt.Printf("%d sessions, %d queries in %s: %.0f queries/s\n", r.sessions, len(r.latencies), r.elapsed.Round(time.Millisecond), r.qps())
	fmt.Printf("latency p50 %.2f ms, p99 %.2f ms, max %.2f ms\n", ms(r.quantile(0.50)), ms(r.quantile(0.99)), ms(r.max()))
	fmt.Printf("errors: %d\n", r.errors)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// loadAvg is the machine's load average (1, 5, 15 minutes) and its
// running/total tasks, from /proc/loadavg.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}
