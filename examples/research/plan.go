package research

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
)

// The routes of the next-experiment selector.
const (
	RouteBaseline  = "baseline"
	RouteReuseBest = "reuse-best"
	RouteScale     = "scale-features"
	RouteVaryK     = "vary-k"
)

// Result is one experiment attempt as its tool result recorded it.
type Result struct {
	Attempt  int
	K        int
	Scale    string
	Accuracy float64
	// Spread is the ratio of the largest to the smallest feature standard
	// deviation the script printed (0 if it printed none).
	Spread float64
	// Chunk is the tool_result chunk that recorded the attempt; CallID its
	// call.
	Chunk  session.ChunkID
	CallID string
}

var (
	reConfig = regexp.MustCompile(`attempt=(\d+) k=(\d+) scale=(\w+)`)
	reAcc    = regexp.MustCompile(`val_accuracy=([0-9.]+)`)
	reStd    = regexp.MustCompile(`feature_std vibration_mm_s=([0-9.]+) temperature_c=([0-9.]+) rpm=([0-9.]+)`)
)

// Results returns the attempts recorded in s's successful run_command
// results, in order.
func Results(s *session.Session) []Result {
	var out []Result
	for _, c := range s.All() {
		tr := c.ToolResult
		if tr == nil || tr.Error != nil || tr.Tool != "run_command" {
			continue
		}
		if r, ok := parseResult(tr.Content); ok {
			r.Chunk, r.CallID = c.ID, tr.CallID
			out = append(out, r)
		}
	}
	return out
}

// parseResult reads experiment.sh's output.
func parseResult(text string) (Result, bool) {
	cfg, acc := reConfig.FindStringSubmatch(text), reAcc.FindStringSubmatch(text)
	if cfg == nil || acc == nil {
		return Result{}, false
	}
	var r Result
	r.Attempt, _ = strconv.Atoi(cfg[1])
	r.K, _ = strconv.Atoi(cfg[2])
	r.Scale = cfg[3]
	r.Accuracy, _ = strconv.ParseFloat(acc[1], 64)
	if m := reStd.FindStringSubmatch(text); m != nil {
		lo, hi := 0.0, 0.0
		for _, v := range m[1:] {
			f, _ := strconv.ParseFloat(v, 64)
			if lo == 0 || f < lo {
				lo = f
			}
			hi = max(hi, f)
		}
		if lo > 0 {
			r.Spread = hi / lo
		}
	}
	return r, true
}

// best returns the attempt with the highest accuracy (the earliest on a
// tie).
func best(rs []Result) (Result, bool) {
	if len(rs) == 0 {
		return Result{}, false
	}
	b := rs[0]
	for _, r := range rs[1:] {
		if r.Accuracy > b.Accuracy {
			b = r
		}
	}
	return b, true
}

// remembered is the best configuration a recall in s returned from memory.
type remembered struct {
	K      int
	Scale  string
	Text   string
	Writer session.ID
}

var reRemembered = regexp.MustCompile(`k=(\d+) scale=(none|standard)`)

// recalledBest finds the best-config entry among s's recall hits.
func recalledBest(s *session.Session) (remembered, bool) {
	for i := s.Len() - 1; i >= 0; i-- {
		m := s.Chunk(i).Memory
		if m == nil || m.Op != session.MemoryRecall {
			continue
		}
		for _, h := range m.Hits {
			if h.URI != BestURI {
				continue
			}
			if g := reRemembered.FindStringSubmatch(h.Text); g != nil {
				k, _ := strconv.Atoi(g[1])
				return remembered{K: k, Scale: g[2], Text: h.Text, Writer: h.Writer}, true
			}
		}
	}
	return remembered{}, false
}

// chooseNext is the next-experiment selector's decision, made in Go from
// what the session recorded: the attempts so far and the recalled memory.
func chooseNext(_ context.Context, s *session.Session, _ []flow.Route) (string, string, error) {
	rs := Results(s)
	b, ok := best(rs)
	if !ok {
		if m, ok := recalledBest(s); ok {
			return RouteReuseBest, fmt.Sprintf("memory %s (written by %s) holds a validated configuration, k=%d scale=%s: run it first",
				BestURI, m.Writer, m.K, m.Scale), nil
		}
		return RouteBaseline, "memory holds no result for this task yet: start with the baseline, k=3 on the raw features", nil
	}
	if b.Scale == "none" && b.Spread > 10 {
		return RouteScale, fmt.Sprintf("attempt %d reached %.2f on raw features, and the feature spreads differ %.0fx, so rpm dominates every distance: standardise the features before tuning k",
			b.Attempt, b.Accuracy, b.Spread), nil
	}
	return RouteVaryK, fmt.Sprintf("attempt %d reached %.2f with comparable features (scale=%s): try k=%d",
		b.Attempt, b.Accuracy, b.Scale, b.K+2), nil
}

// checkAccuracy is the val-accuracy validator: the latest attempt's
// metric, as its tool result recorded it, must reach Threshold.
func checkAccuracy(_ context.Context, s *session.Session) (bool, string, error) {
	rs := Results(s)
	if len(rs) == 0 {
		return false, "no tool result records a val_accuracy", nil
	}
	r := rs[len(rs)-1]
	cmp := ">="
	if r.Accuracy < Threshold {
		cmp = "<"
	}
	return r.Accuracy >= Threshold, fmt.Sprintf("attempt %d (k=%d, scale=%s): val_accuracy %.2f %s %.2f, recorded by tool call %s",
		r.Attempt, r.K, r.Scale, r.Accuracy, cmp, Threshold, r.CallID), nil
}

// Attempt is one route of the selector: it records a brief naming the
// attempt's configuration (a user message), then runs the experimenter.
type Attempt struct {
	Kind         string
	Experimenter *agent.Agent
}

// Forward implements flow.Module.
func (a *Attempt) Forward(ctx context.Context, s *session.Session) (*session.Session, error) {
	brief, err := a.brief(s)
	if err != nil {
		return s, err
	}
	s, err = runctx.Record(ctx, s, runctx.Invoke(ctx, "brief"), session.User(brief))
	if err != nil {
		return s, err
	}
	return a.Experimenter.Forward(ctx, s)
}

// brief says what this attempt runs.
func (a *Attempt) brief(s *session.Session) (string, error) {
	rs := Results(s)
	n := len(rs) + 1
	k, scale, why := 3, "none", "the baseline"
	b, _ := best(rs)
	switch a.Kind {
	case RouteBaseline:
	case RouteReuseBest:
		m, ok := recalledBest(s)
		if !ok {
			return "", fmt.Errorf("research: route %s without a recalled configuration", a.Kind)
		}
		k, scale, why = m.K, m.Scale, "the configuration memory recalled"
	case RouteScale:
		k, scale, why = b.K, "standard", "standardised features"
	case RouteVaryK:
		k, scale, why = b.K+2, b.Scale, "a larger k"
	default:
		return "", fmt.Errorf("research: unknown route %q", a.Kind)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "Attempt %d, %s: k=%d scale=%s.", n, why, k, scale)
	if len(rs) == 0 {
		sb.WriteString(" The workspace is empty: load the bundled dataset first.")
	}
	fmt.Fprintf(&sb, " Run experiment.sh with k=%d, scale=%s, attempt %d and report the validation accuracy.", k, scale, n)
	return sb.String(), nil
}
