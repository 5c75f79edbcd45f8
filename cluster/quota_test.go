package cluster_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/audit"
	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// TestQuotas: a scope's queued-runs quota refuses the submission past it
// (exhausted) and not another scope's; its concurrent-runs quota makes a
// run wait, queued and saying why, while its scope has its quota running,
// on a worker that could take both at once; the model tokens its runs use
// are counted once each, and past its daily quota a submission is refused;
// the audit log says which quota did what.
func TestQuotas(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		log, err := audit.Open(ctx, e.rt.Store, audit.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer log.Close()
		cl, err := cluster.Open(ctx, e.rt, cluster.Options{Audit: log})
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		acme := store.Scope{Tenant: "acme", Project: "web"}
		if _, err := cl.SetQuota(ctx, cluster.Quota{Tenant: "acme", Project: "web", QueuedRuns: 2}); err != nil {
			t.Fatal(err)
		}
		if _, err := cl.SetQuota(ctx, cluster.Quota{Tenant: "acme", Project: "", QueuedRuns: 1}); !errors.Is(err, cluster.ErrBadQuota) {
			t.Fatalf("a quota without a project: %v", err)
		}
		// 2 steps of the example's scripted model: 52 + 52 + 46 tokens.
		in := `{"steps":2,"latency_ms":400,"idempotent":true}`
		submit := func(sc store.Scope) (session.ID, error) {
			return cl.Submit(ctx, "cluster", cluster.SubmitOptions{Input: &in, Tenant: sc.Tenant, Project: sc.Project})
		}
		var acmeRuns []session.ID
		for range 2 {
			id, err := submit(acme)
			if err != nil {
				t.Fatal(err)
			}
			acmeRuns = append(acmeRuns, id)
		}
		if _, err := submit(acme); !errors.Is(err, cluster.ErrExhausted) || !strings.Contains(err.Error(), "queued runs") {
			t.Fatalf("a third queued run of acme/web: %v", err)
		}
		other, err := submit(store.Scope{Tenant: "globex", Project: "web"})
		if err != nil {
			t.Fatalf("another tenant's run: %v", err)
		}

		// One at a time, and 200 tokens a day.
		if _, err := cl.SetQuota(ctx, cluster.Quota{Tenant: "acme", Project: "web", ConcurrentRuns: 1, TokensPerDay: 200}); err != nil {
			t.Fatal(err)
		}
		e.worker("a", "--concurrency", "4")
		sawWait, both := false, false
		e.waitFor("both acme runs done", 90*time.Second, func() bool {
			a, b := e.run(acmeRuns[0]), e.run(acmeRuns[1])
			if a.State == cluster.StateRunning && b.State == cluster.StateRunning {
				both = true
			}
			for _, r := range []*cluster.Run{a, b} {
				if r.State == cluster.StateQueued && strings.Contains(r.Why, "quota of concurrent runs") {
					sawWait = true
				}
			}
			return a.State == cluster.StateDone && b.State == cluster.StateDone
		})
		if both {
			t.Error("two runs of acme/web ran at once under a quota of one")
		}
		if !sawWait {
			t.Error("no run of acme/web was seen waiting for its concurrent-runs quota")
		}
		e.waitState(other, cluster.StateDone, 30*time.Second)
		for _, id := range acmeRuns {
			if r := e.run(id); strings.Contains(r.Why, "quota") {
				t.Errorf("run %s still says %q once done", id, r.Why)
			}
		}
		// Each model call counted once: 150 tokens a run, two runs; the
		// other tenant's runs not at all.
		e.waitFor("the day's use recorded", 10*time.Second, func() bool {
			u, err := cl.UsageToday(ctx, acme)
			return err == nil && u.Tokens >= 300
		})
		if u, _ := cl.UsageToday(ctx, acme); u.Tokens != 300 {
			t.Fatalf("acme/web used %d tokens today, want 300", u.Tokens)
		}
		if u, _ := cl.UsageToday(ctx, store.Scope{Tenant: "globex", Project: "web"}); u.Tokens != 0 {
			t.Fatalf("globex/web, with no daily quota, was counted: %d", u.Tokens)
		}
		if _, err := submit(acme); !errors.Is(err, cluster.ErrExhausted) || !strings.Contains(err.Error(), "tokens today") {
			t.Fatalf("a run of acme/web past its daily tokens: %v", err)
		}

		// The audit log: the two refusals and the wait, by quota.
		var kinds []string
		e.waitFor("the quota records", 10*time.Second, func() bool {
			recs, err := audit.List(ctx, e.rt.Store, audit.Filter{Kind: audit.KindQuota})
			if err != nil {
				t.Fatal(err)
			}
			kinds = kinds[:0]
			for _, r := range recs {
				kinds = append(kinds, r.Outcome+": "+r.Reason)
			}
			return len(recs) >= 3
		})
		all := strings.Join(kinds, "\n")
		for _, want := range []string{"denied: refused: 2 runs of acme/web wait", "waiting: 1 runs of acme/web are running", "denied: refused: acme/web used 300 model tokens"} {
			if !strings.Contains(all, want) {
				t.Errorf("the audit log has no %q:\n%s", want, all)
			}
		}
	})
}
