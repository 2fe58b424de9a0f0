package server

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"time"

	"github.com/sluice-sql/sluice/cluster"
)

type serverInfo struct {
	Info struct {
		Version        string `json:"version"`
		KafkaClusterID string `json:"kafkaClusterId"`
		KsqlServiceID  string `json:"ksqlServiceId"`
		ServerStatus   string `json:"serverStatus"`
	} `json:"KsqlServerInfo"`
}

func (s *Server) handleInfo(w http.ResponseWriter, r *http.Request) {
	var info serverInfo
	info.Info.Version = s.opts.Version
	info.Info.KsqlServiceID = s.eng.ServiceID()
	info.Info.ServerStatus = "RUNNING"
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	id, err := s.eng.ClusterID(ctx)
	if err != nil {
		s.log.Warn("info: no Kafka cluster id", "err", err)
	}
	info.Info.KafkaClusterID = id
	writeJSON(w, http.StatusOK, info)
}

type health struct {
	IsHealthy bool `json:"isHealthy"`
}

// handleHealthcheck reports Kafka's reachability; it answers 503 when
// Kafka does not answer, so a load balancer takes the instance out.
func (s *Server) handleHealthcheck(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	kafka := s.eng.Ping(ctx) == nil
	body := struct {
		IsHealthy bool              `json:"isHealthy"`
		Details   map[string]health `json:"details"`
	}{IsHealthy: kafka, Details: map[string]health{
		"metastore":     {true},
		"kafka":         {kafka},
		"commandRunner": {true},
	}}
	status := http.StatusOK
	if !kafka {
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, body)
}

// handleClusterStatus lists the instances of the service in ksqlDB's
// shape, keyed by host:port: whether each is alive (heard from within
// three heartbeats), when this instance last heard from it, and per query
// the partitions of its input it owns and the stores they hold, and the
// partitions (and stores) it keeps standby state for
// (num.standby.replicas). It reports no store lags.
// Two fields are Sluice's own: url (the advertised URL) and, per query,
// partitionStates ("topic/partition" → task state). Without a registry
// (Options.Cluster) the one instance listed is this one.
func (s *Server) handleClusterStatus(w http.ResponseWriter, r *http.Request) {
	now := time.Now().UnixMilli()
	var instances []cluster.Instance
	if s.opts.Cluster != nil {
		instances = s.opts.Cluster.Instances()
	} else {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		instances = []cluster.Instance{{Self: true, Alive: true, SeenMs: now,
			Status: cluster.Status{URL: scheme + "://" + r.Host, Queries: cluster.EnginePartitions(s.eng)}}}
	}
	stores := s.storesByTopic()
	body := map[string]map[string]hostStatus{"clusterStatus": {}}
	for _, in := range instances {
		hs := hostStatus{HostAlive: in.Alive, LastStatusUpdateMs: in.SeenMs, URL: in.URL, InstanceID: in.ID,
			ActiveStandbyPerQuery: map[string]queryStandby{},
			HostStoreLags:         storeLags{StateStoreLags: map[string]any{}, UpdateTimeMs: in.SeenMs}}
		qids := map[string]bool{}
		for qid := range in.Queries {
			qids[qid] = true
		}
		for qid := range in.Standbys {
			qids[qid] = true
		}
		for qid := range qids {
			parts := in.Queries[qid]
			qs := queryStandby{ActiveStores: []string{}, ActivePartitions: []topicPartition{}, StandByStores: []string{},
				StandByPartitions: []topicPartition{}, PartitionStates: map[string]string{}}
			seenStandby := map[string]bool{}
			for _, p := range in.Standbys[qid] {
				qs.StandByPartitions = append(qs.StandByPartitions, topicPartition{Topic: p.Topic, Partition: p.Partition})
				for _, st := range stores[qid][p.Topic] {
					if !seenStandby[st] {
						seenStandby[st] = true
						qs.StandByStores = append(qs.StandByStores, st)
					}
				}
			}
			sort.Strings(qs.StandByStores)
			seen := map[string]bool{}
			for _, p := range parts {
				qs.ActivePartitions = append(qs.ActivePartitions, topicPartition{Topic: p.Topic, Partition: p.Partition})
				qs.PartitionStates[fmt.Sprintf("%s/%d", p.Topic, p.Partition)] = p.State
				for _, st := range stores[qid][p.Topic] {
					if !seen[st] {
						seen[st] = true
						qs.ActiveStores = append(qs.ActiveStores, st)
					}
				}
			}
			sort.Strings(qs.ActiveStores)
			hs.ActiveStandbyPerQuery[qid] = qs
		}
		body["clusterStatus"][hostPort(in.URL)] = hs
	}
	writeJSON(w, http.StatusOK, body)
}

type storeLags struct {
	StateStoreLags map[string]any `json:"stateStoreLags"`
	UpdateTimeMs   int64          `json:"updateTimeMs"`
}

type topicPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

type queryStandby struct {
	ActiveStores      []string          `json:"activeStores"`
	ActivePartitions  []topicPartition  `json:"activePartitions"`
	StandByStores     []string          `json:"standByStores"`
	StandByPartitions []topicPartition  `json:"standByPartitions"`
	PartitionStates   map[string]string `json:"partitionStates"`
}

type hostStatus struct {
	HostAlive             bool                    `json:"hostAlive"`
	LastStatusUpdateMs    int64                   `json:"lastStatusUpdateMs"`
	ActiveStandbyPerQuery map[string]queryStandby `json:"activeStandbyPerQuery"`
	HostStoreLags         storeLags               `json:"hostStoreLags"`
	URL                   string                  `json:"url"`
	InstanceID            string                  `json:"instanceId,omitempty"`
}

// storesByTopic maps query id → input topic → the state stores of the
// sub-topology reading it: the stores an owner of a partition holds.
func (s *Server) storesByTopic() map[string]map[string][]string {
	out := map[string]map[string][]string{}
	for _, q := range s.eng.Queries() {
		m := map[string][]string{}
		for _, sub := range q.Plan.Topology.Subs {
			for _, n := range sub.Nodes {
				m[sub.Source.Topic] = append(m[sub.Source.Topic], n.StoreNames()...)
			}
		}
		out[q.ID] = m
	}
	return out
}

// hostPort is the host:port of a URL, as ksqlDB keys /clusterStatus.
func hostPort(u string) string {
	if p, err := url.Parse(u); err == nil && p.Host != "" {
		return p.Host
	}
	return u
}
