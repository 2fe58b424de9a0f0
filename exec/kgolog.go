package exec

import (
	"log/slog"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/plugin/kslog"
)

// clientLogger is franz-go's logger for the runner's client: its INFO
// lines (group joins, assignments, metadata updates, a dozen at every
// start and rebalance) are the client's own bookkeeping, so they go to
// DEBUG and `--log-level info` shows Sluice's lines alone. Its warnings
// and errors keep their level.
type clientLogger struct{ inner *kslog.Logger }

var _ kgo.Logger = clientLogger{}

func newClientLogger(log *slog.Logger) clientLogger { return clientLogger{kslog.New(log)} }

// Level tells the client what to log: with slog at INFO the client's INFO
// lines would be demoted below it, so the client need not build them.
func (l clientLogger) Level() kgo.LogLevel {
	if lvl := l.inner.Level(); lvl != kgo.LogLevelInfo {
		return lvl
	}
	return kgo.LogLevelWarn
}

func (l clientLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	if level == kgo.LogLevelInfo {
		level = kgo.LogLevelDebug
	}
	l.inner.Log(level, msg, keyvals...)
}
