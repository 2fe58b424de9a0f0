package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/plugin/kprom"

	"github.com/sluice-sql/sluice/engine"
)

// Metric names, one family each. Counters end in _total, as Prometheus
// names them.
var (
	recordsIn = prometheus.NewDesc("sluice_records_in_total",
		"Input records read by a query.", []string{"query"}, nil)
	recordsOut = prometheus.NewDesc("sluice_records_out_total",
		"Records a query wrote to its sink.", []string{"query"}, nil)
	lateDropped = prometheus.NewDesc("sluice_late_records_dropped_total",
		"Records that arrived after every window they belong to had closed.", []string{"query"}, nil)
	errorsTotal = prometheus.NewDesc("sluice_errors_total",
		"Records a query could not process, by kind (deserialize, timestamp, serialize, processing, commit, missing_column).", []string{"query", "kind"}, nil)
	expired = prometheus.NewDesc("sluice_state_expired_total",
		"State entries deleted by retention.", []string{"query"}, nil)
	stateBytes = prometheus.NewDesc("sluice_state_bytes",
		"Approximate committed bytes of a state store on this instance.", []string{"query", "store"}, nil)
	stateEntries = prometheus.NewDesc("sluice_state_entries",
		"Windows (or keys) a state store holds on this instance.", []string{"query", "store"}, nil)
	restoreRecords = prometheus.NewDesc("sluice_restore_records_total",
		"Changelog records replayed to restore a state store.", []string{"query", "store"}, nil)
	restoreSeconds = prometheus.NewDesc("sluice_restore_seconds",
		"Time spent restoring a state store, summed over its partitions.", []string{"query", "store"}, nil)
	consumerLag = prometheus.NewDesc("sluice_consumer_lag",
		"Records a query's consumer is behind the end of its input partitions on this instance.", []string{"query"}, nil)
	queryUp = prometheus.NewDesc("sluice_query_running",
		"1 while a query runs, 0 once it failed.", []string{"query"}, nil)
	queryStalled = prometheus.NewDesc("sluice_query_stalled",
		"1 while a partition of the query on this instance has input but made no committed progress for sluice.stall.timeout.", []string{"query"}, nil)
)

// collector reads the engine at scrape time, so nothing is counted twice
// and queries that stop disappear from the output.
type collector struct{ eng *engine.Engine }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{recordsIn, recordsOut, lateDropped, errorsTotal, expired, stateBytes, stateEntries, restoreRecords, restoreSeconds, consumerLag, queryUp, queryStalled} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, q := range c.eng.Queries() {
		m := q.Metrics
		counter(recordsIn, m.RecordsIn.Load(), q.ID)
		counter(recordsOut, m.RecordsOut.Load(), q.ID)
		counter(lateDropped, m.LateDropped.Load(), q.ID)
		counter(expired, m.Expired.Load(), q.ID)
		for kind, n := range m.Errors() {
			counter(errorsTotal, n, q.ID, kind)
		}
		gauge(consumerLag, float64(m.Lag.Load()), q.ID)
		up := 1.0
		if q.Err() != nil {
			up = 0
		}
		gauge(queryUp, up, q.ID)
		stalled := 0.0
		if len(q.Stalls()) > 0 {
			stalled = 1
		}
		gauge(queryStalled, stalled, q.ID)
		restores := m.Restores()
		if stores, err := c.eng.QueryState(q.ID); err == nil {
			for _, s := range stores {
				gauge(stateBytes, float64(s.Bytes), q.ID, s.Name)
				gauge(stateEntries, float64(s.Entries), q.ID, s.Name)
				r := restores[s.Name]
				counter(restoreRecords, r.Records, q.ID, s.Name)
				ch <- prometheus.MustNewConstMetric(restoreSeconds, prometheus.CounterValue, r.Took.Seconds(), q.ID, s.Name)
			}
		}
	}
}

// Registry holds Sluice's metrics and those of its Kafka clients.
type Registry struct {
	reg *prometheus.Registry
}

// New returns an empty registry; Watch adds an engine.
func New() *Registry { return &Registry{reg: prometheus.NewRegistry()} }

// ClientOpts is engine.Config.ClientOpts: it names each Kafka client and
// attaches a kprom collector to it, labelled with that client id, so the
// clients of all queries show side by side.
func (r *Registry) ClientOpts(clientID string) []kgo.Opt {
	m := kprom.NewMetrics("sluice_kafka", kprom.Registry(r.reg), kprom.WithClientLabel())
	return []kgo.Opt{kgo.ClientID(clientID), kgo.WithHooks(m)}
}

// Watch adds the per-query metrics of eng.
func (r *Registry) Watch(eng *engine.Engine) error {
	return r.reg.Register(collector{eng})
}

// Handler serves the registry in Prometheus' text format.
func (r *Registry) Handler() http.Handler {
	return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{})
}
