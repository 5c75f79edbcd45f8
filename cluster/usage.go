package cluster

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// A scope's model use of a UTC day is counted by the workers: each sums
// the model calls its slices commit (model_call chunks made during the
// slice, each once, not those a fork or a replay carries over) per scope
// and day, and keeps the sums in labels of its own session. A scope's use
// of a day is the sum over the workers. Daily quotas read it (quota.go).

// Usage is a scope's model use over a day.
type Usage struct {
	Tokens  int64   `json:"tokens"`
	CostUSD float64 `json:"cost_usd"`
}

// labelUsagePrefix starts the label a worker keeps a scope's use of a day
// in: rath.cluster.usage/TENANT/PROJECT/YYYY-MM-DD.
const labelUsagePrefix = "rath.cluster.usage/"

func usageLabel(sc store.Scope, day time.Time) string {
	return labelUsagePrefix + scopeKey(sc) + "/" + day.UTC().Format(time.DateOnly)
}

// UsageToday is scope sc's model use of today (UTC), as the workers have
// recorded it.
func (c *Cluster) UsageToday(ctx context.Context, sc store.Scope) (Usage, error) {
	infos, err := c.rt.Store.List(ctx, store.Filter{Labels: map[string]string{LabelKind: "worker"}})
	if err != nil {
		return Usage{}, err
	}
	key := usageLabel(sc, time.Now())
	var sum Usage
	for _, info := range infos {
		var u Usage
		if raw := info.Labels[key]; raw != "" && json.Unmarshal([]byte(raw), &u) == nil {
			sum.Tokens += u.Tokens
			sum.CostUSD += u.CostUSD
		}
	}
	return sum, nil
}

// usageBook is a worker's sums, by usage label.
type usageBook struct {
	mu  sync.Mutex
	sum map[string]Usage
}

func (b *usageBook) add(key string, u session.Usage) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sum == nil {
		b.sum = map[string]Usage{}
	}
	s := b.sum[key]
	s.Tokens += u.InputTokens + u.OutputTokens
	s.CostUSD += u.CostUSD
	b.sum[key] = s
}

// labels are the sums as labels, for the keys given.
func (b *usageBook) labels(keys ...string) map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]string{}
	for _, k := range keys {
		if u, ok := b.sum[k]; ok {
			raw, _ := json.Marshal(u)
			out[k] = string(raw)
		}
	}
	return out
}

// metered is the store a slice commits through, counting the model calls
// its commits add.
type metered struct {
	store.Store
	since time.Time // the slice's start: chunks made before are not its calls
	count func(session.Usage)
	mu    sync.Mutex
	seen  map[session.ChunkID]bool
}

func meter(st store.Store, since time.Time, count func(session.Usage)) *metered {
	return &metered{Store: st, since: since, count: count, seen: map[session.ChunkID]bool{}}
}

func (m *metered) Commit(ctx context.Context, s *session.Session, prev session.ChunkID) error {
	if err := m.Store.Commit(ctx, s, prev); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := s.Len() - 1; i >= 0; i-- {
		c := s.Chunk(i)
		if c.ID == prev {
			break
		}
		if c.ModelCall == nil || c.ModelCall.Aggregate || c.Time.Before(m.since) || m.seen[c.ID] {
			continue
		}
		m.seen[c.ID] = true
		m.count(c.ModelCall.Usage)
	}
	return nil
}
