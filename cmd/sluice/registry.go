package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"

	"github.com/sluice-sql/sluice/planner"
	"github.com/sluice-sql/sluice/registry"
)

// registryFlags are the Schema Registry flags of run, server and shell.
type registryFlags struct {
	SchemaRegistry       string `name:"schema-registry" env:"SLUICE_SCHEMA_REGISTRY" placeholder:"URL" help:"Schema Registry for the AVRO format: http(s)://[user:password@]host:port. Without it, Sluice on its embedded broker serves its own registry."`
	SchemaRegistryListen string `name:"schema-registry-listen" default:"127.0.0.1:8081" env:"SLUICE_SCHEMA_REGISTRY_LISTEN" help:"Where the embedded Schema Registry listens when Sluice starts its embedded broker (a busy port: any free one)."`
}

// schemaRegistry returns the registry queries use: --schema-registry's,
// or, when Sluice runs its embedded broker, an embedded registry whose
// schemas are kept in dataDir/schemas.json beside the broker's data.
// Neither: nil (AVRO is then refused with an error saying why). served
// is the embedded registry's URL ("" when none started), for the caller
// to announce its own way: run and server on stderr, the shell in its
// banner. The returned func stops what was started.
func (f registryFlags) schemaRegistry(embedded bool, dataDir string, log *slog.Logger) (_ planner.SchemaRegistry, served string, _ func(), _ error) {
	if f.SchemaRegistry != "" {
		cl, err := registryClient(f.SchemaRegistry)
		return cl, "", func() {}, err
	}
	if !embedded {
		return nil, "", func() {}, nil
	}
	file := filepath.Join(dataDir, "broker", "schemas.json")
	reg, err := registry.Serve(f.SchemaRegistryListen, file)
	if err != nil {
		// Not a warning: a free port is the documented fallback, and the
		// address in use is announced anyway.
		log.Info("embedded schema registry: address busy, using a free port", "listen", f.SchemaRegistryListen, "err", err)
		if reg, err = registry.Serve("127.0.0.1:0", file); err != nil {
			return nil, "", nil, err
		}
	}
	cl, err := registry.NewClient(reg.URL())
	if err != nil {
		reg.Close()
		return nil, "", nil, err
	}
	return cl, reg.URL(), func() { reg.Close() }, nil
}

// announceRegistry tells where the embedded registry listens, if one
// started.
func announceRegistry(log *slog.Logger, served string) {
	if served != "" {
		status(log, "embedded schema registry on %s", served)
	}
}

// registryClient connects to a registry URL, taking Basic auth
// credentials from its user info.
func registryClient(raw string) (*registry.Client, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &exitError{2, fmt.Sprintf("--schema-registry %q: want http(s)://host:port", raw)}
	}
	var opts []registry.Option
	if u.User != nil {
		pw, _ := u.User.Password()
		opts = append(opts, registry.BasicAuth(u.User.Username(), pw))
		u.User = nil
	}
	return registry.NewClient(u.String(), opts...)
}

// configString reads a string setting of ksqlDB's name (for example
// ksql.schema.registry.url or ksql.connect.url) from a server's --config
// file: "" when the file or the setting is missing. Kong reads the
// file's flag names itself; these are the names a ksqlDB user brings.
func configString(file, key string) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return ""
	}
	s, _ := m[key].(string)
	return s
}
