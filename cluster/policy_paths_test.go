package cluster_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/store"
)

// A policy file that does not load denies its tenant's run; what the
// tenant sees of it — the run's record and error, every chunk of its
// sessions — names the file relative to the policy directory, never by
// the server's path, which only the worker's log shows.
func TestPolicyErrorsShowNoServerPath(t *testing.T) {
	home := t.TempDir()
	e := newEnv(t, home, "sqlite://"+filepath.Join(home, "rath.db"))
	ctx := context.Background()
	path := filepath.Join(home, "policies", "acme", "web.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"rules": [{"name": "broken", "when": "action.tool ==", "effect": "deny"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	e.worker("a")
	in := `{"steps":1,"latency_ms":1,"idempotent":true}`
	id, err := e.cl.Submit(ctx, "cluster", cluster.SubmitOptions{Input: &in, Tenant: "acme", Project: "web"})
	if err != nil {
		t.Fatal(err)
	}
	run := e.waitState(id, cluster.StateFailed, 60*time.Second)
	rec, err := json.Marshal(run)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(run.Error, "acme/web.json") || !strings.Contains(run.Error, `rule \"broken\"`) && !strings.Contains(run.Error, `rule "broken"`) {
		t.Fatalf("the run's error does not say which file and rule: %q", run.Error)
	}
	seen := []string{string(rec)}
	infos, err := e.rt.Store.List(ctx, store.Filter{Labels: map[string]string{runctx.Label: string(id)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range infos {
		s, err := e.rt.Store.Load(ctx, info.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range s.All() {
			b, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			seen = append(seen, string(b))
		}
	}
	for _, s := range seen {
		if strings.Contains(s, home) {
			t.Fatalf("a server path reaches the tenant: %s", s)
		}
	}
	e.waitFor("the worker's log to name the file", 10*time.Second, func() bool { return strings.Contains(e.logs(), path) })
}
