package server

import (
	"context"
	"net/http"
	"time"
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

// handleClusterStatus describes the one instance this server knows of:
// itself. Instances sharing a service id do not yet learn of each other.
func (s *Server) handleClusterStatus(w http.ResponseWriter, r *http.Request) {
	now := time.Now().UnixMilli()
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	type lags struct {
		StateStoreLags map[string]any `json:"stateStoreLags"`
		UpdateTimeMs   int64          `json:"updateTimeMs"`
	}
	type hostStatus struct {
		HostAlive             bool           `json:"hostAlive"`
		LastStatusUpdateMs    int64          `json:"lastStatusUpdateMs"`
		ActiveStandbyPerQuery map[string]any `json:"activeStandbyPerQuery"`
		HostStoreLags         lags           `json:"hostStoreLags"`
	}
	body := map[string]map[string]hostStatus{"clusterStatus": {
		scheme + "://" + r.Host + "/": {HostAlive: true, LastStatusUpdateMs: now, ActiveStandbyPerQuery: map[string]any{},
			HostStoreLags: lags{StateStoreLags: map[string]any{}, UpdateTimeMs: now}},
	}}
	writeJSON(w, http.StatusOK, body)
}
