package cluster

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// StepMetrics are what a worker's runs do, as Prometheus metrics, observed
// from what they commit: each model call (its latency, tokens and cost, by
// provider and model), each step (the time from a session's previous
// commit to the commit of its next model call), and each tool result that
// is an error (by kind). What a worker observes is its own: scrape every
// worker.
type StepMetrics struct {
	calls      *prometheus.HistogramVec
	steps      prometheus.Histogram
	tokens     *prometheus.CounterVec
	cost       *prometheus.CounterVec
	toolErrors *prometheus.CounterVec
	tools      prometheus.Counter
}

// NewStepMetrics makes the metrics, not yet registered anywhere.
func NewStepMetrics() *StepMetrics {
	buckets := []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}
	return &StepMetrics{
		calls: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "rath_model_call_seconds", Help: "Latency of a model call (all its attempts), by provider and model.", Buckets: buckets,
		}, []string{"provider", "model"}),
		steps: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "rath_step_seconds", Help: "Time of an agent step: from its session's previous commit to the commit of its model call.", Buckets: buckets,
		}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rath_model_tokens_total", Help: "Tokens of model calls, by provider, model and kind (input, output, cache_read).",
		}, []string{"provider", "model", "kind"}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rath_model_cost_usd_total", Help: "Priced cost of model calls in US dollars, by provider and model.",
		}, []string{"provider", "model"}),
		toolErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rath_tool_errors_total", Help: "Tool results that are errors, by tool and kind.",
		}, []string{"tool", "kind"}),
		tools: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "rath_tool_results_total", Help: "Tool results committed.",
		}),
	}
}

// Collectors are the metrics, to register.
func (m *StepMetrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.calls, m.steps, m.tokens, m.cost, m.toolErrors, m.tools}
}

// Observe returns st with every commit observed: what a run commits
// through it is counted once it is stored.
func (m *StepMetrics) Observe(st store.Store) store.Store {
	return &observed{Store: st, m: m, last: map[session.ID]time.Time{}}
}

// observed is a store whose commits are observed. One is made per slice of
// a run, so what it remembers of sessions goes with it.
type observed struct {
	store.Store
	m    *StepMetrics
	mu   sync.Mutex
	last map[session.ID]time.Time // each session's last commit
}

func (o *observed) Commit(ctx context.Context, s *session.Session, prev session.ChunkID) error {
	if err := o.Store.Commit(ctx, s, prev); err != nil {
		return err
	}
	now := time.Now()
	o.mu.Lock()
	last, seen := o.last[s.ID()]
	o.last[s.ID()] = now
	o.mu.Unlock()
	for i := s.Len() - 1; i >= 0; i-- {
		ch := s.Chunk(i)
		if ch.ID == prev {
			break
		}
		o.chunk(ch, now, last, seen)
	}
	return nil
}

// chunk counts one committed chunk.
func (o *observed) chunk(ch session.Chunk, now, last time.Time, seen bool) {
	m := o.m
	switch {
	case ch.ModelCall != nil:
		mc := ch.ModelCall
		if mc.Aggregate {
			return // a usage total, not a call
		}
		m.calls.WithLabelValues(mc.Provider, mc.Model).Observe(mc.Latency.Seconds())
		u := mc.Usage
		m.tokens.WithLabelValues(mc.Provider, mc.Model, "input").Add(float64(u.InputTokens))
		m.tokens.WithLabelValues(mc.Provider, mc.Model, "output").Add(float64(u.OutputTokens))
		m.tokens.WithLabelValues(mc.Provider, mc.Model, "cache_read").Add(float64(u.CacheReadTokens))
		m.cost.WithLabelValues(mc.Provider, mc.Model).Add(u.CostUSD)
		if seen {
			m.steps.Observe(now.Sub(last).Seconds())
		}
	case ch.ToolResult != nil:
		m.tools.Inc()
		if e := ch.ToolResult.Error; e != nil {
			m.toolErrors.WithLabelValues(ch.ToolResult.Tool, e.Kind).Inc()
		}
	}
}
