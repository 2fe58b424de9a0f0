package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
)

// ASSERT TOPIC and ASSERT SCHEMA let a deployment script wait for what
// it depends on: each checks the broker or the Schema Registry until the
// assertion holds or its timeout passes, and fails the statement (and so
// the script) with ksqlDB's wording when it never does.

const (
	// AssertTopicTimeoutProperty is ASSERT TOPIC's timeout when the
	// statement gives none, in milliseconds (ksqlDB's default 1000).
	AssertTopicTimeoutProperty = "ksql.assert.topic.default.timeout.ms"
	// AssertSchemaTimeoutProperty is ASSERT SCHEMA's.
	AssertSchemaTimeoutProperty = "ksql.assert.schema.default.timeout.ms"

	defaultAssertTimeout = time.Second
	// assertPoll is how often an assertion that does not hold yet is
	// checked again.
	assertPoll = 100 * time.Millisecond
)

// ErrAssertFailed is what a failed ASSERT wraps (errors.Is). The error's
// text is ksqlDB's: "Topic t does not exist", "Topic t exists", ….
var ErrAssertFailed = errors.New("assertion failed")

// AssertError is a failed assertion.
type AssertError struct{ Msg string }

func (e *AssertError) Error() string        { return e.Msg }
func (e *AssertError) Is(target error) bool { return target == ErrAssertFailed }

// AssertTopicResult answers ASSERT TOPIC: Exists is true for ASSERT
// TOPIC, false for ASSERT NOT EXISTS TOPIC.
type AssertTopicResult struct {
	Topic  string
	Exists bool
}

// AssertSchemaResult answers ASSERT SCHEMA; ID is set when the statement
// names one.
type AssertSchemaResult struct {
	Subject string
	ID      *int
	Exists  bool
}

func (*AssertTopicResult) entity()  {}
func (*AssertSchemaResult) entity() {}

// SubjectIDs is what ASSERT SCHEMA SUBJECT s ID n asks of a registry that
// can list a subject's versions (registry.Client): the ids of all of
// them. Without it only the subject's latest schema is compared.
type SubjectIDs interface {
	SubjectIDs(ctx context.Context, subject string) ([]int, error)
}

// await calls check until it reports the assertion holds, ctx ends, or
// timeout passes; then it returns check's last failure. check returns a
// non-nil error only when asking failed, which is retried as well.
func await(ctx context.Context, timeout time.Duration, check func(context.Context) (failure string, err error)) error {
	deadline := time.Now().Add(timeout)
	for {
		failure, err := check(ctx)
		if err == nil && failure == "" {
			return nil
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			if err != nil {
				return err
			}
			return &AssertError{Msg: failure}
		}
		t := time.NewTimer(min(wait, assertPoll))
		select {
		case <-ctx.Done():
			t.Stop()
			if err != nil {
				return err
			}
			return fmt.Errorf("%s: %w", failure, ctx.Err())
		case <-t.C:
		}
	}
}

func (e *Engine) assertTopic(ctx context.Context, st *parser.AssertTopic, props map[string]string) (*Result, error) {
	if e.cl == nil {
		return nil, fmt.Errorf("%w: ASSERT TOPIC needs Kafka", planner.ErrUnsupported)
	}
	timeout, err := assertTimeout(st.HasTimeout, st.Timeout, props, propAssertTopicTimeout)
	if err != nil {
		return nil, err
	}
	want := map[string]int{}
	if !st.NotExists {
		for _, p := range st.With {
			if p.Name != "PARTITIONS" && p.Name != "REPLICAS" {
				return nil, &AssertError{Msg: fmt.Sprintf("Cannot assert unknown topic property: %s", p.Name)}
			}
			n, err := strconv.Atoi(p.Value.Text)
			if err != nil || p.Value.Kind == parser.LitString || p.Value.Kind == parser.LitBool {
				return nil, fmt.Errorf("%w: line %d:%d: %s must be a whole number, got %s", planner.ErrInvalid, p.Pos.Line, p.Pos.Column, p.Name, p.Value)
			}
			want[p.Name] = n
		}
	}
	err = await(ctx, timeout, func(ctx context.Context) (string, error) {
		tds, err := e.describeTopics(ctx, st.Topic)
		if err != nil {
			return "", fmt.Errorf("ASSERT TOPIC %s: %w", st.Topic, err)
		}
		td, ok := tds[st.Topic]
		exists := ok && td.Err == nil
		if ok && td.Err != nil && !errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
			return "", fmt.Errorf("ASSERT TOPIC %s: %w", st.Topic, td.Err)
		}
		switch {
		case st.NotExists && exists:
			return fmt.Sprintf("Topic %s exists", st.Topic), nil
		case st.NotExists:
			return "", nil
		case !exists:
			return fmt.Sprintf("Topic %s does not exist", st.Topic), nil
		}
		got := map[string]int{"PARTITIONS": len(td.Partitions)}
		if p, ok := td.Partitions[0]; ok {
			got["REPLICAS"] = len(p.Replicas)
		}
		var mismatches []string
		for _, name := range sortedKeys(want) {
			if want[name] != got[name] {
				mismatches = append(mismatches, fmt.Sprintf("Mismatched configuration for topic %s: For config %s, expected %d got %d",
					st.Topic, strings.ToLower(name), want[name], got[name]))
			}
		}
		return strings.Join(mismatches, "\n"), nil
	})
	if err != nil {
		return nil, err
	}
	msg := fmt.Sprintf("Topic %s exists", st.Topic)
	if st.NotExists {
		msg = fmt.Sprintf("Topic %s does not exist", st.Topic)
	}
	return &Result{Message: msg, Entity: &AssertTopicResult{Topic: st.Topic, Exists: !st.NotExists}}, nil
}

func (e *Engine) assertSchema(ctx context.Context, st *parser.AssertSchema, props map[string]string) (*Result, error) {
	reg := e.cfg.SchemaRegistry
	if reg == nil {
		return nil, fmt.Errorf("%w: ASSERT SCHEMA needs a Schema Registry: give --schema-registry URL (the embedded broker serves one)", planner.ErrInvalid)
	}
	timeout, err := assertTimeout(st.HasTimeout, st.Timeout, props, propAssertSchemaTimeout)
	if err != nil {
		return nil, err
	}
	desc := "Schema with"
	if st.Subject != "" {
		desc += " subject name " + st.Subject
	}
	if st.HasID {
		desc += " id " + strconv.Itoa(st.ID)
	}
	err = await(ctx, timeout, func(ctx context.Context) (string, error) {
		exists, err := schemaExists(ctx, reg, st)
		if err != nil {
			return "", fmt.Errorf("ASSERT SCHEMA: %w", err)
		}
		switch {
		case exists && st.NotExists:
			return desc + " exists", nil
		case !exists && !st.NotExists:
			return desc + " does not exist", nil
		}
		return "", nil
	})
	if err != nil {
		return nil, err
	}
	res := &AssertSchemaResult{Subject: st.Subject, Exists: !st.NotExists}
	if st.HasID {
		id := st.ID
		res.ID = &id
	}
	msg := desc + " exists"
	if st.NotExists {
		msg = desc + " does not exist"
	}
	return &Result{Message: msg, Entity: res}, nil
}

// schemaExists asks reg whether the schema st names is registered: the
// subject has a version (with the id, when both are given), or the id is
// registered.
func schemaExists(ctx context.Context, reg planner.SchemaRegistry, st *parser.AssertSchema) (bool, error) {
	if st.Subject == "" {
		_, err := reg.Schema(ctx, st.ID)
		if errors.Is(err, format.ErrSchemaNotFound) {
			return false, nil
		}
		return err == nil, err
	}
	if st.HasID {
		if l, ok := reg.(SubjectIDs); ok {
			ids, err := l.SubjectIDs(ctx, st.Subject)
			for _, id := range ids {
				if id == st.ID {
					return true, err
				}
			}
			return false, err
		}
	}
	_, id, found, err := reg.LatestSchema(ctx, st.Subject)
	if err != nil || !found {
		return false, err
	}
	return !st.HasID || id == st.ID, nil
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// assertTopicStatement is ASSERT [NOT EXISTS] TOPIC.
type assertTopicStatement struct{}

func (assertTopicStatement) execute(ctx context.Context, e *Engine, st *parser.AssertTopic, c call, sess *session) (*Result, error) {
	r, err := e.assertTopic(ctx, st, sess.snapshot())
	if err != nil {
		return nil, err
	}
	return &Result{Statement: c.text, Message: r.Message, Entity: r.Entity}, nil
}

// assertSchemaStatement is ASSERT [NOT EXISTS] SCHEMA.
type assertSchemaStatement struct{}

func (assertSchemaStatement) execute(ctx context.Context, e *Engine, st *parser.AssertSchema, c call, sess *session) (*Result, error) {
	r, err := e.assertSchema(ctx, st, sess.snapshot())
	if err != nil {
		return nil, err
	}
	return &Result{Statement: c.text, Message: r.Message, Entity: r.Entity}, nil
}
