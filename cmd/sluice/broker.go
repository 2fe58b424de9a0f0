package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/sluice-sql/sluice/broker"
	"github.com/sluice-sql/sluice/registry"
)

type brokerCmd struct {
	Listen  string `default:"127.0.0.1:9092" env:"SLUICE_LISTEN" help:"Address to listen on."`
	DataDir string `name:"data-dir" default:"./sluice-data" env:"SLUICE_DATA_DIR" help:"Directory for the broker's data (kept under DIR/broker)."`
	// SchemaRegistryListen also serves a Schema Registry, so engines
	// sharing this broker share its schemas.
	SchemaRegistryListen string `name:"schema-registry-listen" env:"SLUICE_SCHEMA_REGISTRY_LISTEN" placeholder:"ADDR" help:"Also serve a Schema Registry on this address (its schemas kept under DIR/broker)."`
}

func (c *brokerCmd) Run(log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	b, err := broker.Start(broker.Config{Listen: c.Listen, DataDir: filepath.Join(c.DataDir, "broker")})
	if err != nil {
		return err
	}
	if c.SchemaRegistryListen != "" {
		reg, err := registry.Serve(c.SchemaRegistryListen, filepath.Join(c.DataDir, "broker", "schemas.json"))
		if err != nil {
			b.Close()
			return err
		}
		defer reg.Close()
		// Printed before the broker's line, which scripts wait for.
		fmt.Printf("schema registry listening on %s\n", reg.URL())
	}
	// Scripts wait for this line to learn the address.
	fmt.Printf("broker listening on %s\n", b.Addr())
	<-ctx.Done()
	b.Close()
	log.Info("broker stopped")
	return nil
}

// defaultBrokerListen is where run, server and shell start the embedded
// broker: Kafka's own port, the one clients are configured for, so that
// their configuration still works after a restart.
const defaultBrokerListen = "127.0.0.1:9092"

// embeddedBrokerFlags are the embedded broker's flags of run, server and
// shell.
type embeddedBrokerFlags struct {
	// No default tag: an address the user named, even the default one,
	// is held to, while the unnamed default gives way.
	BrokerListen string `name:"broker-listen" env:"SLUICE_BROKER_LISTEN" placeholder:"HOST:PORT" help:"Where the embedded broker listens (without --brokers). Default 127.0.0.1:9092, Kafka's port, or a free port said on stderr when that is taken; an address named here must be free (port 0: any free one)."`
}

// startBroker starts the embedded broker with its data under
// dataDir/broker and, when announce is set, says on stderr where it
// listens. The default address, when taken (by a Kafka, or another
// Sluice), gives way to a free port on the same host, said on stderr too
// (logged at info when not announcing); an address the user named does
// not, since clients configured for it would reach whatever holds it.
func (f embeddedBrokerFlags) startBroker(dataDir string, log *slog.Logger, announce bool) (*broker.Broker, error) {
	dir := filepath.Join(dataDir, "broker")
	listen := f.BrokerListen
	if listen == "" {
		listen = defaultBrokerListen
	}
	b, err := broker.Start(broker.Config{Listen: listen, DataDir: dir})
	if err != nil && f.BrokerListen == "" && errors.Is(err, syscall.EADDRINUSE) {
		host, _, _ := net.SplitHostPort(listen)
		if b, err = broker.Start(broker.Config{Listen: net.JoinHostPort(host, "0"), DataDir: dir}); err == nil {
			const gaveWay = "embedded broker: %s is in use; listening on %s instead (pin an address with --broker-listen)"
			if announce {
				status(log, gaveWay, listen, b.Addr())
			} else {
				log.Info(fmt.Sprintf(gaveWay, listen, b.Addr()))
			}
		}
	}
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("%w (choose another address with --broker-listen, or a running Kafka with --brokers)", err)
		}
		return nil, err
	}
	if announce {
		status(log, "embedded broker on %s (data in %s)", b.Addr(), dir)
	}
	return b, nil
}
