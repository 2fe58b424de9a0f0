package engine_test

import (
	"testing"

	"github.com/sluice-sql/sluice/internal/testudf"
)

func testudfGo(t *testing.T) []byte { return testudf.GoModule(t) }

var testudfTrap = testudf.TrapModule
