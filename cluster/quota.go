package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/openrath/rath/audit"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Quotas bound what one scope (a tenant and a project) may use of the
// cluster: runs waiting, runs running at once, and model tokens and cost
// per UTC day. Past the queued-runs quota or a daily quota, a submission
// is refused (ErrExhausted); past the concurrent-runs quota or a daily
// quota, a queued run waits (its job snoozes) until the scope is under it
// again. Each refusal, and each run that begins to wait, is an audit
// record (Options.Audit) saying which quota.
//
// A quota is a small session of the runtime's own (store.SystemScope)
// whose labels hold its record; a scope without one is unbounded. The
// concurrent-runs quota is checked when a worker takes a run, by counting,
// so workers taking runs of one scope at the same instant may pass it by
// a few; the daily quotas count the model calls committed, so the call
// that crosses one finishes (its run then waits).

// ErrExhausted: a quota of the run's scope is reached.
var ErrExhausted = errors.New("cluster: quota exhausted")

// waitingQuota starts the Why of a run waiting for its scope's quota.
const waitingQuota = "waiting: quota: "

// ErrBadQuota: a quota names no valid scope or a negative bound.
var ErrBadQuota = errors.New("cluster: bad quota")

// Quota is one scope's bounds (0: unbounded).
type Quota struct {
	Tenant  string `json:"tenant"`
	Project string `json:"project"`
	// QueuedRuns bounds the runs waiting to be worked (queued,
	// unroutable, behind another).
	QueuedRuns int `json:"queued_runs,omitempty"`
	// ConcurrentRuns bounds the runs running at once.
	ConcurrentRuns int `json:"concurrent_runs,omitempty"`
	// TokensPerDay and CostPerDay bound the model tokens (input and
	// output) and the cost in US dollars of a UTC day.
	TokensPerDay int64      `json:"tokens_per_day,omitempty"`
	CostPerDay   float64    `json:"cost_per_day,omitempty"`
	ID           session.ID `json:"id,omitempty"`
	Updated      time.Time  `json:"updated"`
}

// Labels of quota sessions.
const (
	// LabelQuota holds the scope ("tenant/project") a quota bounds.
	LabelQuota = "rath.cluster.quota"
	// LabelQuotaRecord holds its record as JSON.
	LabelQuotaRecord = "rath.cluster.quota.record"
	kindQuota        = "quota"
)

func (q *Quota) scope() store.Scope {
	return store.ScopeOf(store.Scope{Tenant: q.Tenant, Project: q.Project}.Labels())
}

func scopeKey(sc store.Scope) string {
	sc = store.ScopeOf(sc.Labels())
	return sc.Tenant + "/" + sc.Project
}

// SetQuota sets the quota of q's scope (replacing any before; all zero
// bounds: unbounded).
func (c *Cluster) SetQuota(ctx context.Context, q Quota) (*Quota, error) {
	if q.QueuedRuns < 0 || q.ConcurrentRuns < 0 || q.TokensPerDay < 0 || q.CostPerDay < 0 {
		return nil, fmt.Errorf("%w: a bound is negative", ErrBadQuota)
	}
	for _, n := range []string{q.Tenant, q.Project} {
		if n == "" || strings.ContainsAny(n, "/~") {
			return nil, fmt.Errorf("%w: tenant %q and project %q must both be named", ErrBadQuota, q.Tenant, q.Project)
		}
		if err := store.CheckScopeName(n); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadQuota, err)
		}
	}
	sc := q.scope()
	key := scopeKey(sc)
	unlock, err := c.lockIdem(ctx, scheduleLock("quota\x00"+key))
	if err != nil {
		return nil, fmt.Errorf("cluster: set quota %s: %w", key, err)
	}
	defer unlock()
	st := c.rt.Store
	infos, err := c.quotaInfos(ctx, key)
	if err != nil {
		return nil, err
	}
	q.Tenant, q.Project, q.Updated = sc.Tenant, sc.Project, time.Now().UTC()
	if len(infos) > 0 {
		q.ID = infos[0].ID
	} else {
		ses := session.New().Append(session.Note("quota of " + key))
		if err := st.Commit(store.WithCreateScope(ctx, store.SystemScope), ses, ""); err != nil {
			return nil, fmt.Errorf("cluster: set quota %s: %w", key, err)
		}
		q.ID = ses.ID()
	}
	rec, err := json.Marshal(q)
	if err != nil {
		return nil, err
	}
	if err := st.SetLabels(ctx, q.ID, map[string]string{LabelKind: kindQuota, LabelQuota: key, LabelQuotaRecord: string(rec)}); err != nil {
		return nil, fmt.Errorf("cluster: set quota %s: %w", key, err)
	}
	c.quotas.reset()
	return &q, nil
}

// Quotas lists the quotas set, by scope.
func (c *Cluster) Quotas(ctx context.Context) ([]Quota, error) {
	infos, err := c.quotaInfos(ctx, "")
	if err != nil {
		return nil, err
	}
	out := make([]Quota, 0, len(infos))
	for _, info := range infos {
		var q Quota
		if json.Unmarshal([]byte(info.Labels[LabelQuotaRecord]), &q) != nil {
			continue
		}
		q.ID = info.ID
		out = append(out, q)
	}
	slices.SortFunc(out, func(a, b Quota) int { return strings.Compare(scopeKey(a.scope()), scopeKey(b.scope())) })
	return out, nil
}

func (c *Cluster) quotaInfos(ctx context.Context, key string) ([]store.Info, error) {
	f := store.Filter{Labels: map[string]string{LabelKind: kindQuota}}
	if key != "" {
		f.Labels[LabelQuota] = key
	}
	infos, err := c.rt.Store.List(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("cluster: quotas: %w", err)
	}
	return infos, nil
}

// quotaCache holds the quotas, read at most once a second.
type quotaCache struct {
	mu sync.Mutex
	at time.Time
	by map[string]Quota
}

func (qc *quotaCache) reset() {
	qc.mu.Lock()
	qc.at = time.Time{}
	qc.mu.Unlock()
}

// quotaOf is scope sc's quota (zero: unbounded).
func (c *Cluster) quotaOf(ctx context.Context, sc store.Scope) (Quota, error) {
	qc := &c.quotas
	qc.mu.Lock()
	defer qc.mu.Unlock()
	if time.Since(qc.at) > time.Second {
		qs, err := c.Quotas(ctx)
		if err != nil {
			return Quota{}, err
		}
		qc.by = map[string]Quota{}
		for _, q := range qs {
			qc.by[scopeKey(q.scope())] = q
		}
		qc.at = time.Now()
	}
	return qc.by[scopeKey(sc)], nil
}

// exhausted says which quota of sc a new run would pass ("" if none):
// the queued runs, or a daily one.
func (c *Cluster) exhausted(ctx context.Context, sc store.Scope, q Quota) (string, error) {
	if q.QueuedRuns > 0 {
		n, err := c.Queued(ctx, &sc)
		if err != nil {
			return "", err
		}
		if n >= q.QueuedRuns {
			return fmt.Sprintf("%d runs of %s wait to be worked, its quota of queued runs", n, scopeKey(sc)), nil
		}
	}
	return c.dailyExhausted(ctx, sc, q)
}

// dailyExhausted says which daily quota of sc today's use has reached.
func (c *Cluster) dailyExhausted(ctx context.Context, sc store.Scope, q Quota) (string, error) {
	if q.TokensPerDay == 0 && q.CostPerDay == 0 {
		return "", nil
	}
	u, err := c.UsageToday(ctx, sc)
	if err != nil {
		return "", err
	}
	switch {
	case q.TokensPerDay > 0 && u.Tokens >= q.TokensPerDay:
		return fmt.Sprintf("%s used %d model tokens today (UTC), its quota of %d a day", scopeKey(sc), u.Tokens, q.TokensPerDay), nil
	case q.CostPerDay > 0 && u.CostUSD >= q.CostPerDay:
		return fmt.Sprintf("%s spent $%.4f on models today (UTC), its quota of $%.4f a day", scopeKey(sc), u.CostUSD, q.CostPerDay), nil
	}
	return "", nil
}

// admit refuses a submission in scope sc past a quota (ErrExhausted,
// audited).
func (c *Cluster) admit(ctx context.Context, sc store.Scope, workflow string) error {
	q, err := c.quotaOf(ctx, sc)
	if err != nil || q == (Quota{}) {
		return err
	}
	why, err := c.exhausted(ctx, sc, q)
	if err != nil || why == "" {
		return err
	}
	c.auditQuota(ctx, sc, "run.create", "workflow/"+workflow, audit.OutcomeDenied, "refused: "+why)
	return fmt.Errorf("%w: %s", ErrExhausted, why)
}

// auditQuota records a quota decision, if the cluster keeps an audit log.
func (c *Cluster) auditQuota(ctx context.Context, sc store.Scope, action, resource, outcome, reason string) {
	if c.opts.Audit == nil {
		return
	}
	rec := audit.Record{Kind: audit.KindQuota, Principal: "cluster", Tenant: sc.Tenant, Project: sc.Project,
		Action: action, Resource: resource, Outcome: outcome, Reason: reason}
	if err := c.opts.Audit.Append(context.WithoutCancel(ctx), rec); err != nil {
		c.log.Warn("audit", "err", err)
	}
}

// Scope is the scope the run belongs to (the default scope's for a run
// submitted before scopes).
func (r *Run) Scope() store.Scope {
	return store.ScopeOf(store.Scope{Tenant: r.Tenant, Project: r.Project}.Labels())
}

// Scope is the scope the schedule and its runs belong to.
func (s *Schedule) Scope() store.Scope {
	return store.ScopeOf(store.Scope{Tenant: s.Tenant, Project: s.Project}.Labels())
}

// quotaWait is run's scope's quota, how long the run must wait before it
// may run (0: it may now), and, when it may, what to call once it is
// running (under a concurrent-runs quota, counting and starting are one
// step for the scope: its lock is held until then): its scope has its quota of runs running, or
// has used a daily quota (then it waits a minute at a time, so that a
// raised quota or the next day lets it go). A run that begins to wait
// says why (its record's Why) and is audited once.
func (c *Cluster) quotaWait(ctx context.Context, run *Run) (Quota, time.Duration, func(), error) {
	none := func() {}
	sc := run.Scope()
	q, err := c.quotaOf(ctx, sc)
	if err != nil || q == (Quota{}) {
		return q, 0, none, err
	}
	why, err := c.dailyExhausted(ctx, sc, q)
	if err != nil {
		return q, 0, none, err
	}
	wait := time.Minute
	if why == "" && q.ConcurrentRuns > 0 {
		// Counting and starting are one step for the scope's runs, on
		// every worker: the scope's lock is held until this run is
		// running.
		unlock, err := c.lockIdem(ctx, scheduleLock("running\x00"+scopeKey(sc)))
		if err != nil {
			return q, 0, none, err
		}
		n, err := c.rt.Store.Count(ctx, store.Filter{Labels: map[string]string{LabelKind: "run", LabelState: string(StateRunning)}, Scope: &sc})
		if err != nil {
			unlock()
			return q, 0, none, err
		}
		if run.State == StateRunning {
			n-- // taken over: it is among those counted
		}
		if n < q.ConcurrentRuns {
			if strings.HasPrefix(run.Why, waitingQuota) {
				run.Why = "" // it waits no more (saved as it moves on)
			}
			var once sync.Once
			return q, 0, func() { once.Do(unlock) }, nil
		}
		unlock()
		why, wait = fmt.Sprintf("%d runs of %s are running, its quota of concurrent runs", n, scopeKey(sc)), 2*time.Second
	}
	const waiting = waitingQuota
	if why == "" {
		if strings.HasPrefix(run.Why, waiting) {
			run.Why = "" // it waits no more (saved as it moves on)
		}
		return q, 0, none, nil
	}
	if !strings.HasPrefix(run.Why, waiting) {
		c.auditQuota(ctx, sc, "run.start", "run/"+string(run.ID), audit.OutcomeWaiting, why)
	}
	if run.Why != waiting+why {
		run.Why = waiting + why
		if err := run.save(ctx, c.rt.Store); err != nil {
			return q, 0, none, err
		}
	}
	return q, wait, none, nil
}
