package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/broker"
)

// cluster is the broker every contender of one benchmark run talks to.
type cluster struct {
	// Name says which broker the figures came from, for the report.
	Name  string
	Seeds []string
	close func()
}

// openCluster connects to brokers, or starts an embedded broker in this
// process when brokers is empty.
func openCluster(ctx context.Context, brokers string) (*cluster, error) {
	if brokers == "" {
		b, err := broker.Start(broker.Config{})
		if err != nil {
			return nil, err
		}
		return &cluster{Name: "embedded (broker.Start, kfake, in process)", Seeds: []string{b.Addr()}, close: b.Close}, nil
	}
	seeds := strings.Split(brokers, ",")
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	api, err := kadm.NewClient(cl).ApiVersions(ctx)
	if err != nil {
		return nil, fmt.Errorf("reach %s: %w", brokers, err)
	}
	name := "external " + brokers
	api.Each(func(v kadm.BrokerApiVersions) {
		if v.Err == nil {
			name = fmt.Sprintf("external %s (%s)", brokers, v.VersionGuess())
		}
	})
	return &cluster{Name: name, Seeds: seeds, close: func() {}}, nil
}

// connOpts are the connection options every client of the run starts from.
func (c *cluster) connOpts() []kgo.Opt { return []kgo.Opt{kgo.SeedBrokers(c.Seeds...)} }

func (c *cluster) Close() { c.close() }

// benchEnv is what every harness command starts from: a scratch
// directory, the sluice binary (built from this checkout unless given),
// and the broker (embedded unless brokers are given).
type benchEnv struct {
	tmp string
	cl  *cluster
}

// setUp makes a benchEnv for the command name; *sluice is set to the
// binary built when it is empty. Close removes what it made.
func setUp(ctx context.Context, name string, sluice *string, brokers string) (*benchEnv, error) {
	tmp, err := os.MkdirTemp("", "bench-"+name+"-")
	if err != nil {
		return nil, err
	}
	if *sluice == "" {
		*sluice = filepath.Join(tmp, "sluice")
		if err := goBuild(ctx, "..", *sluice, "./cmd/sluice"); err != nil {
			os.RemoveAll(tmp)
			return nil, fmt.Errorf("build sluice: %w", err)
		}
	}
	cl, err := openCluster(ctx, brokers)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return &benchEnv{tmp: tmp, cl: cl}, nil
}

func (e *benchEnv) Close() {
	e.cl.Close()
	os.RemoveAll(e.tmp)
}
