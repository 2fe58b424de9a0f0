package main

import (
	"context"
	"fmt"
	"log/slog"
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
