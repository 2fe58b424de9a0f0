package engine

import (
	"context"
	"strings"
)

type overridesKey struct{}

// WithProperties returns a context whose statements run with props
// overriding the engine's session properties. A server passes each
// request's properties this way (ksqlDB's streamsProperties), so one
// client's `auto.offset.reset` does not change another's queries.
// Names are matched case-insensitively.
func WithProperties(ctx context.Context, props map[string]string) context.Context {
	if len(props) == 0 {
		return ctx
	}
	m := make(map[string]string, len(props)+len(overrides(ctx)))
	for k, v := range overrides(ctx) {
		m[k] = v
	}
	for k, v := range props {
		m[strings.ToLower(k)] = v
	}
	return context.WithValue(ctx, overridesKey{}, m)
}

func overrides(ctx context.Context) map[string]string {
	m, _ := ctx.Value(overridesKey{}).(map[string]string)
	return m
}
