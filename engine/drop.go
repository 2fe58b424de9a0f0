package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
)

// drop removes a stream or table from the catalog, as ksqlDB does: the
// query that a CREATE … AS SELECT started to write it is terminated with
// it, while other queries reading or inserting into it must be
// terminated first, so that no query is left reading a name that no
// longer exists. DELETE TOPIC deletes its Kafka topic too.
func (e *Engine) drop(ctx context.Context, st *parser.Drop) (string, error) {
	src, msg, err := e.checkDrop(st)
	if err != nil || src == nil {
		return msg, err
	}
	for _, id := range []string{src.QueryID, materializer(src)} {
		if q := e.query(id); id != "" && q != nil {
			if err := e.terminateQuery(ctx, q); err != nil {
				return "", fmt.Errorf("drop %s: %w", src.Name, err)
			}
		}
	}
	e.cat.Remove(src.Name)
	if st.DeleteTopic {
		if err := e.clu.deleteTopic(ctx, src.Topic); err != nil {
			return "", fmt.Errorf("drop %s: %w", src.Name, err)
		}
	}
	return fmt.Sprintf("Source `%s` (topic: %s) was dropped.", src.Name, src.Topic), nil
}

// checkDrop validates a DROP without side effects. It returns the source
// to drop, or none with the outcome message when IF EXISTS finds nothing.
func (e *Engine) checkDrop(st *parser.Drop) (*planner.Source, string, error) {
	src, err := e.cat.Lookup(st.Name)
	if err != nil {
		if st.IfExists {
			return nil, fmt.Sprintf("Source `%s` does not exist.", strings.ToUpper(st.Name)), nil
		}
		// ksqlDB's words: "Stream X does not exist" (or Table).
		return nil, "", fmt.Errorf("%s %s %w", strings.Title(strings.ToLower(st.Kind.String())), strings.ToUpper(st.Name), planner.ErrNotFound) //nolint:staticcheck // ASCII words only
	}
	if src.Kind != st.Kind {
		return nil, "", fmt.Errorf("%w: incompatible data source type is %s, but statement was DROP %s", planner.ErrInvalid, src.Kind, st.Kind)
	}
	if st.DeleteTopic && src.ReadOnly {
		return nil, "", fmt.Errorf("%w: Cannot delete topic for read-only source: %s", planner.ErrInvalid, src.Name)
	}
	readers, writers := e.queriesOf(src.Name)
	var blockingWriters []string
	for _, q := range writers {
		if q.ID != src.QueryID {
			blockingWriters = append(blockingWriters, q.ID)
		}
	}
	var readerIDs []string
	for _, q := range readers {
		if q.ID != materializer(src) {
			readerIDs = append(readerIDs, q.ID)
		}
	}
	if len(readerIDs) > 0 || len(blockingWriters) > 0 {
		return nil, "", fmt.Errorf("%w: cannot drop %s: the following queries read from it: [%s], and the following queries write into it: [%s]; terminate them first",
			planner.ErrInvalid, src.Name, strings.Join(readerIDs, ", "), strings.Join(blockingWriters, ", "))
	}
	return src, "", nil
}

// materializer is the id of the query keeping a source table in state
// for pull queries (ends with the table), "" for other sources.
func materializer(src *planner.Source) string {
	if src.Kind != parser.KindTable || !src.ReadOnly {
		return ""
	}
	return planner.MaterializeQueryID(src.Name)
}

// dropCommand is DROP STREAM/TABLE [IF EXISTS] [DELETE TOPIC].
type dropCommand struct{}

func (dropCommand) check(_ context.Context, e *Engine, st *parser.Drop, c call) (*Result, bool, error) {
	src, msg, err := e.checkDrop(st)
	if err == nil && src == nil {
		return &Result{Statement: c.text, Message: msg}, true, nil
	}
	return nil, false, err
}

func (dropCommand) apply(ctx context.Context, e *Engine, st *parser.Drop, c call) (*Result, error) {
	msg, err := e.drop(ctx, st)
	if err != nil {
		return nil, err
	}
	return &Result{Statement: c.text, Message: msg}, nil
}

func (dropCommand) statusID(st *parser.Drop) string {
	return fmt.Sprintf("%s/`%s`/drop", strings.ToLower(st.Kind.String()), st.Name)
}
