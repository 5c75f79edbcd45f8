package cluster_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/audit"
	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// TestPolicyOnClusterRuns: a worker decides a run's actions by the policy
// of the run's tenant and project (<home>/policies/T/P.json): acme/web's
// denies the example's tool, so its run records no effect and its session
// holds the deny decisions; a run of the default scope, under a policy
// file without rules, records its effects; every decision is in the audit
// log. (Where no file applies nothing is decided, and nothing audited.)
func TestPolicyOnClusterRuns(t *testing.T) {
	home := t.TempDir()
	e := newEnv(t, home, "sqlite://"+filepath.Join(home, "rath.db"))
	ctx := context.Background()
	dir := filepath.Join(home, "policies", "acme")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rules := `{"rules": [{"name": "no-effects", "when": "action.kind == 'tool' && action.tool == 'record_effect'",
		"effect": "deny", "reason": "acme/web records nothing"}]}`
	if err := os.WriteFile(filepath.Join(dir, "web.json"), []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, "policies", "default"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "policies", "default", "default.json"), []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	e.worker("a")
	in := `{"steps":2,"latency_ms":1,"idempotent":true}`
	denied, err := e.cl.Submit(ctx, "cluster", cluster.SubmitOptions{Input: &in, Tenant: "acme", Project: "web"})
	if err != nil {
		t.Fatal(err)
	}
	allowed, err := e.cl.Submit(ctx, "cluster", cluster.SubmitOptions{Input: &in})
	if err != nil {
		t.Fatal(err)
	}
	e.waitState(denied, cluster.StateDone, 60*time.Second)
	e.waitState(allowed, cluster.StateDone, 60*time.Second)
	if n := e.effectsOf(denied); n != 0 {
		t.Fatalf("the denied run recorded %d effects", n)
	}
	if n := e.effectsOf(allowed); n != 2 {
		t.Fatalf("the default scope's run recorded %d effects, want 2", n)
	}
	// The denied run's sessions hold the decisions: what was asked, the
	// rule, the outcome.
	infos, err := e.rt.Store.List(ctx, store.Filter{Labels: map[string]string{runctx.Label: string(denied)}})
	if err != nil {
		t.Fatal(err)
	}
	denies := 0
	for _, in := range infos {
		s, err := e.rt.Store.Load(ctx, in.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range s.All() {
			if c.Decision != nil && c.Decision.Selector == "policy" && c.Decision.Choice == "deny" && strings.Contains(c.Decision.Reason, "rule no-effects") {
				denies++
			}
			if c.ToolResult != nil && c.ToolResult.Error != nil && c.ToolResult.Error.Kind != session.ToolErrPolicy {
				t.Errorf("a refused call's error is of kind %q, want policy", c.ToolResult.Error.Kind)
			}
		}
	}
	if denies == 0 {
		t.Fatal("the denied run's sessions hold no deny decision of rule no-effects")
	}
	// And the audit log has them, with the run's scope.
	e.waitFor("the policy records", 10*time.Second, func() bool {
		recs, err := audit.List(ctx, e.rt.Store, audit.Filter{Kind: audit.KindPolicy})
		if err != nil {
			t.Fatal(err)
		}
		deny, allow := false, false
		for _, r := range recs {
			deny = deny || (r.Outcome == "deny" && r.Tenant == "acme" && r.Project == "web" && r.Resource == "record_effect" && r.Principal == "run:"+string(denied))
			allow = allow || (r.Outcome == "allow" && r.Tenant == store.DefaultScope && r.Principal == "run:"+string(allowed))
		}
		return deny && allow
	})
}
