package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/connect"
	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/planner"
	"github.com/sluice-sql/sluice/state"
)

// Config configures an Engine.
type Config struct {
	// ConnOpts connect to Kafka (at least kgo.SeedBrokers). Ignored with
	// Memory.
	ConnOpts []kgo.Opt
	// SchemaRegistry serves the Schema Registry formats (AVRO): the
	// schemas of sources declared without columns, the schema ids
	// records carry, the schemas sinks register. Nil: those formats are
	// refused with an error saying a registry is needed.
	SchemaRegistry planner.SchemaRegistry
	// DataDir holds the Badger state ("" with Memory: in-memory Badger).
	DataDir string
	// ServiceID names this service; instances with the same id share
	// queries and internal topics. Default "default".
	ServiceID string
	// Memory runs without a broker (the offline test runner). It cannot
	// be combined with CommandTopic.
	Memory bool
	// CommandTopic keeps the service's catalog in Kafka: every command
	// (IsCommand: CREATE, INSERT INTO … SELECT, TERMINATE, PAUSE/RESUME,
	// DROP, ALTER, CREATE/DROP TYPE) that passes its check is appended
	// to the single-partition topic CommandTopicName(ServiceID) (created
	// if missing, never deleted by retention) with the session
	// properties in force, and applied in the topic's order by every
	// instance of the service. Open replays the topic before it returns,
	// so a restarted engine resumes its queries, and then follows it, so
	// instances agree on streams, tables and queries. Default false: the
	// catalog lives only in this process, and callers such as `sluice
	// run` execute their statements again on each start.
	CommandTopic bool
	// Properties are initial session properties (SET overrides them).
	Properties map[string]string
	Log        *slog.Logger
	// OnRestoreProgress hears how state restores advance (for progress
	// bars); it may be called from several queries at once.
	OnRestoreProgress func(exec.RestoreProgress)
	// ClientOpts, when set, adds options to each long-lived Kafka client
	// the engine makes (one per query, one for administration), named by
	// a client id unique within the process: the server hangs one
	// metrics hook on each that way.
	ClientOpts func(clientID string) []kgo.Opt
	// OnPartitionsChange, when set, is called whenever the partitions a
	// persistent query owns on this instance, or their tasks' states,
	// change (see Partitions). An instance registry (package cluster)
	// publishes them from it; it must not block.
	OnPartitionsChange func()
	// LiveInstances, when set, counts the live instances of the service,
	// this one included: DESCRIBE EXTENDED and EXPLAIN warn when a query
	// has fewer input partitions. A server sets it from its instance
	// registry; unset, the engine counts itself alone.
	LiveInstances func() int
	// Owners, when set, lists the instances of the service and what each
	// holds of a query (see Owner), for DESCRIBE … EXTENDED and SHOW
	// QUERIES EXTENDED.
	Owners func(queryID string) []Owner
	// ConnectURL is the Kafka Connect REST API the connector statements
	// (CREATE SOURCE|SINK CONNECTOR, SHOW CONNECTORS, DESCRIBE CONNECTOR,
	// DROP CONNECTOR, SHOW CONNECTOR PLUGINS) call, as ksqlDB's
	// ksql.connect.url; user info in it is sent as Basic authentication.
	// Default "": those statements fail saying no Connect is configured.
	ConnectURL string
	// UDFDir is a directory of user-defined functions loaded at Open, as
	// ksqlDB's extension directory: a functions.sql of CREATE [TABLE]
	// FUNCTION statements whose PATHs are relative to it (UDFManifest).
	// Its functions exist on this instance only. Default "": none.
	UDFDir string
	// SkipPlannerRules names planner rules left out of every plan
	// (planner.Options.SkipRules). Only tests set it: to run a query as a
	// Sluice before a rule did, and restart it on the plan with the rule.
	SkipPlannerRules []string
}

// Engine executes statements against one catalog.
type Engine struct {
	cfg Config
	log *slog.Logger
	cat *planner.Catalog
	db  *state.DB
	// clu is where topics live and queries run (Kafka or memory).
	clu cluster
	// cl and adm reach Kafka for what only Kafka has (the command topic,
	// stream scans, ASSERT TOPIC); nil on a memory cluster.
	cl  *kgo.Client
	adm *kadm.Client
	// sess holds the session properties of Execute and ExecuteStatement.
	sess *session
	// connect reaches Kafka Connect (nil without Config.ConnectURL).
	connect *connect.Client

	// instanceID names this process's data directory; with the query id
	// it makes a transactional id that survives restarts.
	instanceID string

	// cmd follows the command topic (nil without Config.CommandTopic).
	cmd *commandLog
	// applyMu serializes commands.
	applyMu sync.Mutex

	mu      sync.Mutex
	queries map[string]*Query
	// insertSeq numbers the INSERT INTO … SELECT queries per target.
	insertSeq map[string]int
	// deferStarts is set while the command topic is replayed at Open.
	deferStarts bool
	// leftovers are the Kafka leftovers of queries terminated during
	// the command topic's replay, deleted at its end (see terminateQuery).
	leftovers []leftovers
}

// Query is a running persistent query.
type Query struct {
	ID        string
	Statement string
	Plan      *planner.Query
	Metrics   *exec.Metrics
	runner    *exec.KafkaRunner
	// props are the session properties the query was created with.
	props map[string]string
	// pending holds the properties of a query whose start waits for the
	// end of the command topic's replay.
	pending map[string]string
	// paused is set by PAUSE and cleared by RESUME; it survives the
	// runner's start (a query paused in the command log starts paused).
	paused bool
	// push fans the query's output out to scalable push queries
	// (push_v2.go); nil when created with the registry off.
	push *exec.PushRegistry
}

// QueryPaused is the state of a query PAUSE stopped.
const QueryPaused = "PAUSED"

// Tasks reports the partitions this instance processes and their states.
func (q *Query) Tasks() []exec.TaskInfo {
	if q.runner == nil {
		return nil
	}
	return q.runner.Tasks()
}

// Err reports why the query stopped, if it failed.
func (q *Query) Err() error {
	if q.runner == nil {
		return nil
	}
	return q.runner.Err()
}

// Open creates an engine: opens the state database and connects to Kafka.
func Open(ctx context.Context, cfg Config) (*Engine, error) {
	if cfg.ServiceID == "" {
		cfg.ServiceID = "default"
	}
	if cfg.Memory && cfg.CommandTopic {
		return nil, errors.New("open engine: a Memory engine has no command topic")
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	e := &Engine{cfg: cfg, log: cfg.Log, cat: planner.NewCatalog(), sess: &session{props: map[string]string{}}, queries: map[string]*Query{}, insertSeq: map[string]int{}}
	if cfg.SchemaRegistry != nil {
		e.cat.SetRegistry(cfg.SchemaRegistry)
	}
	if cfg.ConnectURL != "" {
		cl, err := connect.New(cfg.ConnectURL)
		if err != nil {
			return nil, fmt.Errorf("open engine: %w", err)
		}
		e.connect = cl
	}
	for k, v := range cfg.Properties {
		e.sess.set(k, v)
	}
	dir := ""
	if cfg.DataDir != "" {
		dir = filepath.Join(cfg.DataDir, "state", cfg.ServiceID)
	}
	minFree, err := minFreeBytes(cfg.Properties)
	if err != nil {
		return nil, err
	}
	db, err := state.Open(state.Options{Dir: dir, Logger: cfg.Log, MinFreeBytes: minFree})
	if err != nil {
		return nil, fmt.Errorf("open state: %w", err)
	}
	e.db = db
	if dir != "" {
		if e.instanceID, err = instanceID(dir); err != nil {
			db.Close()
			return nil, err
		}
	} else {
		e.instanceID = randomID()
	}
	if cfg.UDFDir != "" {
		if err := e.loadUDFDir(ctx, cfg.UDFDir); err != nil {
			_ = e.cat.CloseFunctions()
			db.Close()
			return nil, err
		}
	}
	if cfg.Memory {
		e.clu = newMemoryCluster(exec.NewMemoryRunner(db, cfg.Log), cfg.Log)
		return e, nil
	}
	opts := append([]kgo.Opt{}, cfg.ConnOpts...)
	opts = append(opts, kgo.RecordPartitioner(exec.Partitioner(nil, nil)), kgo.ProducerLinger(2*time.Millisecond),
		// INSERT … VALUES and the command topic compress as the
		// instance's queries do unless a query sets its own.
		kgo.ProducerBatchCompression(exec.CompressionCodec(compressionType(cfg.Properties))))
	opts = append(opts, e.clientOpts("sluice-"+cfg.ServiceID+"-admin-"+e.instanceID)...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("kafka client: %w", err)
	}
	e.cl = cl
	e.adm = kadm.NewClient(cl)
	e.clu = &kafkaCluster{e: e, cl: cl, adm: e.adm}
	pingCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := cl.Ping(pingCtx); err != nil {
		e.Close()
		return nil, fmt.Errorf("cannot reach Kafka: %w", err)
	}
	if cfg.CommandTopic {
		if e.cmd, err = openCommandLog(ctx, e); err != nil {
			e.Close()
			return nil, err
		}
	}
	return e, nil
}

// Catalog returns the engine's catalog.
func (e *Engine) Catalog() *planner.Catalog { return e.cat }

// DB returns the engine's state database.
func (e *Engine) DB() *state.DB { return e.db }

// ConnOpts returns a copy of the options the engine connects to Kafka
// with, for readers outside queries (PRINT); nil for a Memory engine.
func (e *Engine) ConnOpts() []kgo.Opt { return e.clu.connOpts() }

// Memory returns the in-memory runner of a Memory engine (nil otherwise).
func (e *Engine) Memory() *exec.MemoryRunner {
	if m, ok := e.clu.(*memoryCluster); ok {
		return m.run
	}
	return nil
}

// Queries lists the running persistent queries, sorted by id.
func (e *Engine) Queries() []*Query {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]*Query, 0, len(e.queries))
	for _, q := range e.queries {
		out = append(out, q)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Close stops every query cleanly (outputs flushed, state and offsets
// committed) and releases the database and clients.
func (e *Engine) Close() error {
	var errs []error
	// Commands stop first: none may start a query while they stop.
	if e.cmd != nil {
		e.cmd.close()
	}
	for _, q := range e.Queries() {
		if err := e.stopQuery(q); err != nil {
			errs = append(errs, err)
		}
	}
	if e.clu != nil {
		if err := e.clu.close(); err != nil {
			errs = append(errs, err)
		}
	}
	if e.db != nil {
		if err := e.db.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := e.cat.CloseFunctions(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (e *Engine) stopQuery(q *Query) error {
	e.mu.Lock()
	delete(e.queries, q.ID)
	e.mu.Unlock()
	q.push.Close(nil)
	if q.runner != nil {
		if err := q.runner.Stop(); err != nil {
			return fmt.Errorf("stop %s: %w", q.ID, err)
		}
	}
	e.clu.stopped(q)
	return nil
}

// instanceID reads the id of the instance owning dir, creating it on
// first use.
func instanceID(dir string) (string, error) {
	path := filepath.Join(dir, "instance-id")
	if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	id := randomID()
	if err := os.WriteFile(path, []byte(id+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("write instance id: %w", err)
	}
	return id, nil
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// MinFreeBytesProperty names the instance property that sets how much
// free disk space state commits leave untouched (state.Options.MinFreeBytes):
// below it a stateful query fails with "disk full" instead of Badger
// filling the disk and crashing the process. Default 128 MiB; -1 turns
// the check off.
const MinFreeBytesProperty = "sluice.state.min.free.bytes"

// clientOpts returns the extra options of a client named id.
func (e *Engine) clientOpts(id string) []kgo.Opt {
	if e.cfg.ClientOpts == nil {
		return nil
	}
	return e.cfg.ClientOpts(id)
}

// ServiceID is the service id the engine runs under.
func (e *Engine) ServiceID() string { return e.cfg.ServiceID }

// ClusterID asks Kafka for its cluster id ("" when the cluster has none;
// "memory" for a Memory engine).
func (e *Engine) ClusterID(ctx context.Context) (string, error) { return e.clu.clusterID(ctx) }

// Ping checks that Kafka answers (always nil for a Memory engine).
func (e *Engine) Ping(ctx context.Context) error { return e.clu.ping(ctx) }
