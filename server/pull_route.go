package server

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/sluice-sql/sluice/cluster"
)

// answerer is an instance that may answer some partitions of a pull
// query: the owner, reading its tasks' state, or an instance keeping a
// standby of them, reading its standby state.
type answerer struct {
	// url is the instance's advertised URL; empty for this instance.
	url     string
	standby bool
}

func (a answerer) self() bool { return a.url == "" }

// candidates lists, in the order to try them, the instances that may
// answer a partition: its owner when the registry knows a live one, then,
// with standby reads, the live instances keeping a standby of it (this
// instance first: no network). An owner that recently left a forward
// unanswered (suspect) goes after the standbys, so that the queries that
// follow a first failover do not wait for it again; it is still tried
// last. Without standby reads the owner is the only candidate, as before
// standby reads existed.
func candidates(owner cluster.Instance, hasOwner, suspect bool, standbys []cluster.Instance, standbyReads bool) []answerer {
	var out []answerer
	var own *answerer
	if hasOwner {
		a := answerer{}
		if !owner.Self {
			a.url = owner.URL
		}
		own = &a
	}
	if own != nil && (!standbyReads || !suspect) {
		out = append(out, *own)
	}
	if !standbyReads {
		return out
	}
	for _, in := range standbys {
		a := answerer{url: in.URL, standby: true}
		if in.Self {
			a.url = ""
		}
		if own != nil && !own.standby && a.url == own.url {
			continue // an owner is never its own standby
		}
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	if own != nil && suspect {
		out = append(out, *own)
	}
	return out
}

// gathering finds, for each partition a pull query needs, an instance
// that answers it, and collects the rows: each partition goes to its
// first candidate; one that fails goes, with standby reads, to its next;
// one whose candidates all refused is asked again, retryPause apart and
// for up to retryWindow, from candidates read anew (it is moving between
// instances: its owner was cut off and the new one is not in the
// registry yet), while the others are asked at once. No partition is
// ever left out of an answer: one that nobody answers fails the query.
type gathering struct {
	standbyReads            bool
	retryWindow, retryPause time.Duration
	// candidates lists who may answer a partition, from the registry as
	// it is now (see candidates).
	candidates func(part int32) []answerer
	// ask reads parts from a; early lets a forward give up soon.
	ask func(ctx context.Context, a answerer, parts []int32, early bool) ([]json.RawMessage, error)
	// failedOver hears of parts a did not answer, about to be asked
	// elsewhere.
	failedOver func(a answerer, parts []int32, err error)
	// unavailable is the error for a partition no candidate answers when
	// none said why.
	unavailable func(part int32) error
}

// gathered is what the answerers of a pull query sent.
type gathered struct {
	rows []json.RawMessage
	// forwardedTo are the URLs of the other instances that answered,
	// sorted; standbyOf the partitions read from a standby, ascending.
	forwardedTo []string
	standbyOf   []int32
}

// run gathers the rows of the needed partitions.
func (g *gathering) run(ctx context.Context, needed []int32) (*gathered, error) {
	began := time.Now()
	cands := map[int32][]answerer{}
	readCandidates := func(parts []int32) {
		for _, part := range parts {
			cands[part] = g.candidates(part)
		}
	}
	readCandidates(needed)
	failed := map[answerer]bool{}
	lastErr := map[int32]error{}
	unanswered := func(part int32) error {
		if err := lastErr[part]; err != nil {
			return err
		}
		return g.unavailable(part)
	}
	out := &gathered{}
	forwardedTo := map[string]bool{}
	pending := needed
	for len(pending) > 0 {
		groups, unavailable := route(pending, cands, failed)
		retry := len(unavailable) > 0 && g.standbyReads && time.Since(began) < g.retryWindow
		if len(unavailable) > 0 && !retry {
			return nil, unanswered(unavailable[0])
		}
		order := sortedAnswerers(groups)
		answers := make([][]json.RawMessage, len(order))
		errs := make([]error, len(order))
		var wg sync.WaitGroup
		for i, a := range order {
			parts := groups[a]
			early := g.standbyReads && hasFallback(a, parts, cands, failed)
			wg.Add(1)
			go func() {
				defer wg.Done()
				answers[i], errs[i] = g.ask(ctx, a, parts, early)
			}()
		}
		wg.Wait()
		pending = nil
		var fatal []error
		for i, a := range order {
			parts := groups[a]
			if err := errs[i]; err != nil {
				if !g.standbyReads || !failoverable(err) {
					fatal = append(fatal, err)
					continue
				}
				g.failedOver(a, parts, err)
				failed[a] = true
				for _, part := range parts {
					lastErr[part] = err
				}
				pending = append(pending, parts...)
				continue
			}
			out.rows = append(out.rows, answers[i]...)
			if !a.self() {
				forwardedTo[a.url] = true
			}
			if a.standby {
				out.standbyOf = append(out.standbyOf, parts...)
			}
		}
		if len(fatal) > 0 {
			return nil, errors.Join(fatal...)
		}
		if retry {
			select {
			case <-ctx.Done():
				return nil, unanswered(unavailable[0])
			case <-time.After(g.retryPause):
			}
			pending = append(pending, unavailable...)
			readCandidates(pending)
			failed = map[answerer]bool{}
		}
		slices.Sort(pending)
	}
	for u := range forwardedTo {
		out.forwardedTo = append(out.forwardedTo, u)
	}
	sort.Strings(out.forwardedTo)
	slices.Sort(out.standbyOf)
	return out, nil
}

// route gives each partition of pending to its first candidate not in
// failed. Partitions left without one come back in unavailable, ascending;
// each group's partitions are ascending.
func route(pending []int32, cands map[int32][]answerer, failed map[answerer]bool) (groups map[answerer][]int32, unavailable []int32) {
	groups = map[answerer][]int32{}
	for _, p := range pending {
		found := false
		for _, a := range cands[p] {
			if !failed[a] {
				groups[a] = append(groups[a], p)
				found = true
				break
			}
		}
		if !found {
			unavailable = append(unavailable, p)
		}
	}
	for _, ps := range groups {
		slices.Sort(ps)
	}
	slices.Sort(unavailable)
	return groups, unavailable
}

// hasFallback reports whether a partition of parts has a candidate after
// a, not failed: a forward to a may then give up early (failoverAfter)
// rather than wait out the whole answer's bound.
func hasFallback(a answerer, parts []int32, cands map[int32][]answerer, failed map[answerer]bool) bool {
	for _, p := range parts {
		cs := cands[p]
		at := slices.Index(cs, a)
		for _, c := range cs[at+1:] {
			if !failed[c] && c != a {
				return true
			}
		}
	}
	return false
}

// sortedAnswerers orders a route's groups: this instance first, then by
// URL, owners before standbys.
func sortedAnswerers(groups map[answerer][]int32) []answerer {
	out := make([]answerer, 0, len(groups))
	for a := range groups {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].url != out[j].url {
			return out[i].url < out[j].url
		}
		return !out[i].standby && out[j].standby
	})
	return out
}

// suspects remembers instances that left a forward unanswered (no
// connection, no response in time): pull queries with standby reads try
// their standbys first until the registry hears from them again.
type suspects struct {
	mu sync.Mutex
	at map[string]time.Time // URL → when it failed to answer
}

// mark records that url did not answer at t.
func (s *suspects) mark(url string, t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.at == nil {
		s.at = map[string]time.Time{}
	}
	s.at[url] = t
}

// clear forgets url, which answered.
func (s *suspects) clear(url string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.at, url)
}

// suspect reports whether in failed to answer after the registry last
// heard from it.
func (s *suspects) suspect(in cluster.Instance) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.at[in.URL]
	return ok && !time.UnixMilli(in.SeenMs).After(t)
}
