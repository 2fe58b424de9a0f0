package engine

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
)

// createSourceCommand is CREATE STREAM/TABLE, with columns or AS SELECT.
type createSourceCommand struct{}

func (createSourceCommand) check(ctx context.Context, e *Engine, st *parser.CreateSource, c call) (*Result, bool, error) {
	if _, err := e.cat.Lookup(st.Name); err == nil && st.IfNotExists {
		return &Result{Statement: c.text, Message: alreadyExists(st)}, true, nil
	}
	var err error
	if st.Query != nil {
		_, err = e.planAsSelect(st, c.text, c.props)
	} else {
		_, _, err = e.checkSource(ctx, st, c.text, c.props, false)
	}
	return nil, false, err
}

func (createSourceCommand) apply(ctx context.Context, e *Engine, st *parser.CreateSource, c call) (*Result, error) {
	res := &Result{Statement: c.text}
	if st.Query != nil {
		q, err := e.createAsSelect(ctx, st, c.text, c.props)
		if err != nil {
			return nil, err
		}
		res.Query = q
		if q != nil {
			res.Message = fmt.Sprintf("Created query with ID %s", q.ID)
		} else {
			res.Message = alreadyExists(st)
		}
		return res, nil
	}
	msg, err := e.createSource(ctx, st, c.text, c.props, c.accepted)
	if err != nil {
		return nil, err
	}
	res.Message = msg
	return res, nil
}

func (createSourceCommand) statusID(st *parser.CreateSource) string {
	return fmt.Sprintf("%s/`%s`/create", strings.ToLower(st.Kind.String()), st.Name)
}

func alreadyExists(st *parser.CreateSource) string {
	return fmt.Sprintf("%s %s already exists", strings.ToLower(st.Kind.String()), st.Name)
}

// checkSource plans CREATE STREAM/TABLE with columns without side
// effects: the source, and whether its topic has to be created. accepted
// says the statement was checked when it entered the command topic: a
// topic that has since gained partitions must not make a replay forget
// the source, so the topic's count is taken as it is now.
func (e *Engine) checkSource(ctx context.Context, st *parser.CreateSource, text string, props map[string]string, accepted bool) (*planner.Source, bool, error) {
	if existing, err := e.cat.Lookup(st.Name); err == nil && !st.OrReplace {
		return nil, false, fmt.Errorf("cannot add %s '%s': a %s with the same name %w", strings.ToLower(st.Kind.String()), st.Name, strings.ToLower(existing.Kind.String()), planner.ErrExists)
	}
	src, err := planner.CreateSourceWith(e.cat, st, text, e.planOptions(props))
	if err != nil {
		return nil, false, err
	}
	create, err := e.clu.fitSource(ctx, src, accepted)
	if err != nil {
		return nil, false, err
	}
	return src, create, nil
}

func (e *Engine) createSource(ctx context.Context, st *parser.CreateSource, text string, props map[string]string, accepted bool) (string, error) {
	if _, err := e.cat.Lookup(st.Name); err == nil && st.IfNotExists {
		return alreadyExists(st), nil
	}
	src, create, err := e.checkSource(ctx, st, text, props, accepted)
	if err != nil {
		return "", err
	}
	if create {
		if err := e.clu.createTopic(ctx, src.Topic, src.Partitions, src.Replicas, topicConfigs(src)); err != nil {
			return "", err
		}
	}
	if err := e.cat.Add(src, st.OrReplace); err != nil {
		return "", err
	}
	if err := e.materializeSource(ctx, src, text, props); err != nil {
		e.cat.Remove(src.Name)
		return "", err
	}
	return fmt.Sprintf("%s created", strings.Title(strings.ToLower(st.Kind.String()))), nil //nolint:staticcheck // ASCII words only
}

// materializeSource starts the query that keeps a source table in state
// for pull queries, as ksqlDB does (CST_<name>, planner.PlanMaterialize).
// It reads the topic from the start: the table is all of it. A windowed
// source table is not materialized.
func (e *Engine) materializeSource(ctx context.Context, src *planner.Source, text string, props map[string]string) error {
	if src.Kind != parser.KindTable || !src.ReadOnly || src.Window != exec.NotWindowed {
		return nil
	}
	plan, err := planner.PlanMaterialize(src)
	if err != nil {
		return err
	}
	if old := e.query(plan.ID); old != nil {
		if err := e.stopQuery(old); err != nil {
			return err
		}
	}
	p := maps.Clone(props)
	if p == nil {
		p = map[string]string{}
	}
	p[propAutoOffsetReset.Name] = "earliest"
	_, err = e.start(ctx, plan, text, p)
	return err
}

// queryID is deterministic, so running the same statements again resumes
// the same queries: the same consumer group, state and changelogs.
func queryID(kind parser.SourceKind, name string) string {
	prefix := "CSAS_"
	if kind == parser.KindTable {
		prefix = "CTAS_"
	}
	return prefix + strings.ToUpper(name)
}

// planAsSelect plans CREATE … AS SELECT without side effects.
func (e *Engine) planAsSelect(st *parser.CreateSource, text string, props map[string]string) (*planner.Query, error) {
	if st.Query.HasLimit {
		return nil, fmt.Errorf("%w: CREATE %s AS SELECT statements don't support LIMIT clause.", planner.ErrUnsupported, st.Kind)
	}
	if existing, err := e.cat.Lookup(st.Name); err == nil && !st.OrReplace {
		return nil, fmt.Errorf("cannot add %s '%s': a %s with the same name %w", strings.ToLower(st.Kind.String()), st.Name, strings.ToLower(existing.Kind.String()), planner.ErrExists)
	}
	if err := planner.CheckReplace(e.cat, st); err != nil {
		return nil, err
	}
	target, err := planner.TargetOf(st, text)
	if err != nil {
		return nil, err
	}
	if st.OrReplace {
		if old, err := e.cat.Lookup(st.Name); err == nil && old.QueryID != "" {
			target.Replaces = old
		}
	}
	plan, err := planner.PlanQuery(e.cat, st.Query, target, queryID(st.Kind, st.Name), e.planOptions(props))
	if err != nil {
		return nil, err
	}
	if old := e.query(plan.ID); old != nil && st.OrReplace {
		// An in-place upgrade: the new plan inherits the old one's
		// offsets and state, so both must fit it.
		if err := planner.CheckUpgrade(old.Plan, plan); err != nil {
			return nil, err
		}
	}
	return plan, nil
}

func (e *Engine) createAsSelect(ctx context.Context, st *parser.CreateSource, text string, props map[string]string) (*Query, error) {
	if _, err := e.cat.Lookup(st.Name); err == nil && st.IfNotExists {
		return nil, nil
	}
	plan, err := e.planAsSelect(st, text, props)
	if err != nil {
		return nil, err
	}
	if old := e.query(plan.ID); old != nil {
		if err := e.stopQuery(old); err != nil {
			return nil, err
		}
	}
	if err := e.clu.createTopic(ctx, plan.Sink.Topic, plan.Sink.Partitions, plan.Sink.Replicas, topicConfigs(plan.Sink)); err != nil {
		return nil, err
	}
	plan.Sink.Partitions = e.clu.sinkPartitions(plan.Sink.Partitions)
	if err := e.cat.Add(plan.Sink, st.OrReplace); err != nil {
		return nil, err
	}
	q, err := e.start(ctx, plan, text, props)
	if err != nil {
		e.cat.Remove(plan.Sink.Name)
		return nil, err
	}
	return q, nil
}

// topicConfigs are the configs of a topic Sluice creates for a stream or
// table: a table's topic (not windowed) is compacted, as ksqlDB makes
// it, since only each key's latest record counts; a join restores the
// table from it.
func topicConfigs(src *planner.Source) map[string]string {
	if src.Kind == parser.KindTable && src.Window == exec.NotWindowed {
		return map[string]string{"cleanup.policy": "compact"}
	}
	return nil
}
