package cluster

import (
	"fmt"
	"slices"
	"strings"

	"github.com/openrath/rath/session"
)

// pool is the live workers sharing one queue.
type pool struct {
	Queue   string
	Offers  map[string]string
	Serves  []string
	Workers []string
}

func poolsOf(live []WorkerInfo) []pool {
	byQueue := map[string]*pool{}
	var out []*pool
	for _, w := range live {
		p := byQueue[w.Pool]
		if p == nil {
			p = &pool{Queue: w.Pool, Offers: w.Offers, Serves: w.Serves}
			byQueue[w.Pool] = p
			out = append(out, p)
		}
		p.Workers = append(p.Workers, w.ID)
	}
	res := make([]pool, len(out))
	for i, p := range out {
		res[i] = *p
	}
	slices.SortFunc(res, func(a, b pool) int { return strings.Compare(a.Queue, b.Queue) })
	return res
}

// admits says whether the pool can take a run needing needs, of workflow
// name and (once it started) revision; if not, why.
func (p pool) admits(name, revision string, needs map[string]string) (bool, string) {
	served := slices.ContainsFunc(p.Serves, func(r string) bool {
		if revision != "" {
			return r == revision
		}
		return revisionName(r) == name
	})
	if !served {
		if revision != "" {
			return false, "does not serve revision " + revision
		}
		return false, "does not serve workflow " + name
	}
	keys := make([]string, 0, len(needs))
	for k := range needs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if o, ok := p.Offers[k]; !ok || !offers(o, needs[k]) {
			return false, fmt.Sprintf("does not offer %s=%s", k, needs[k])
		}
	}
	return true, ""
}

func (p pool) describe() string {
	o := canon(p.Offers)
	if o == "" {
		o = "no offers"
	}
	return fmt.Sprintf("%s; workers %s", o, strings.Join(p.Workers, ", "))
}

// routing is a routing choice: the chosen pool's queue ("" for none), the
// candidates and why, as a decision chunk records it.
type routing struct {
	Queue      string
	Candidates []session.Candidate
	Reason     string
}

// decide routes a run among the live pools: the pools that admit it, the
// one with the most live workers first (ties by name).
func decide(pools []pool, name, revision string, needs map[string]string) routing {
	var r routing
	var best *pool
	var refusals []string
	for i := range pools {
		p := &pools[i]
		r.Candidates = append(r.Candidates, session.Candidate{Name: p.Queue, Description: p.describe()})
		ok, why := p.admits(name, revision, needs)
		if !ok {
			refusals = append(refusals, p.Queue+" "+why)
			continue
		}
		if best == nil || len(p.Workers) > len(best.Workers) {
			best = p
		}
	}
	what := "workflow " + name
	if revision != "" {
		what = "revision " + revision
	}
	if n := canon(needs); n != "" {
		what += " needing " + n
	}
	switch {
	case best != nil:
		r.Queue = best.Queue
		r.Reason = fmt.Sprintf("%s: pool %s admits it with %d live worker(s) (%s)", what, best.Queue, len(best.Workers), strings.Join(best.Workers, ", "))
		if len(refusals) > 0 {
			r.Reason += "; not " + strings.Join(refusals, "; not ")
		}
	case len(pools) == 0:
		r.Reason = what + ": no live worker"
	default:
		r.Reason = what + ": no live worker admits it (" + strings.Join(refusals, "; ") + ")"
	}
	return r
}

// chunk is the routing as a decision chunk.
func (r routing) chunk(selector string) session.Chunk {
	choice := r.Queue
	if choice == "" {
		choice = session.NoRoute
	}
	return session.Of(&session.Decision{Selector: selector, Candidates: r.Candidates, Choice: choice, Reason: r.Reason}).
		WithTier(session.TierDurable)
}
