package main

import (
	"log/slog"
	"net/url"
)

// connectFlags name the Kafka Connect the connector statements use, in
// run, server and shell (where an engine runs in the process).
type connectFlags struct {
	ConnectURL string `name:"connect-url" env:"SLUICE_CONNECT_URL" placeholder:"URL" help:"Kafka Connect REST API for CREATE SOURCE|SINK CONNECTOR, SHOW CONNECTORS, DESCRIBE CONNECTOR and DROP CONNECTOR: http(s)://[user:password@]host:port (a server also reads ksql.connect.url from its --config file). Without it those statements fail."`
}

// announceConnect says which Connect the connector statements use.
func (f connectFlags) announceConnect(log *slog.Logger) {
	if f.ConnectURL != "" {
		status(log, "connector statements use Kafka Connect at %s", f.shownConnect())
	}
}

// shownConnect is the Connect URL without its credentials.
func (f connectFlags) shownConnect() string {
	u, err := url.Parse(f.ConnectURL)
	if err != nil {
		return f.ConnectURL
	}
	u.User = nil
	return u.String()
}
