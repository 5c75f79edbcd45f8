package cluster_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/store"
)

// A run, a quota and a schedule cannot name a tenant or project "." or
// "..": each is refused before anything is stored.
func TestScopeNamesRefuseDots(t *testing.T) {
	home := t.TempDir()
	e := newEnv(t, home, "sqlite://"+filepath.Join(home, "rath.db"))
	ctx := context.Background()
	in := `{"steps":1,"latency_ms":1,"idempotent":true}`
	for _, name := range []string{".", ".."} {
		for _, o := range []cluster.SubmitOptions{{Tenant: name}, {Tenant: "acme", Project: name}} {
			o.Input = &in
			if _, err := e.cl.Submit(ctx, "cluster", o); !errors.Is(err, store.ErrBadScope) {
				t.Errorf("Submit %s/%s: %v", o.Tenant, o.Project, err)
			}
			keyed := o
			keyed.Key = "k-" + name
			if _, _, err := e.cl.SubmitKeyed(ctx, "cluster", keyed); !errors.Is(err, store.ErrBadScope) {
				t.Errorf("SubmitKeyed %s/%s: %v", o.Tenant, o.Project, err)
			}
			if _, err := e.cl.SubmitMany(ctx, "cluster", []cluster.SubmitOptions{o}); !errors.Is(err, store.ErrBadScope) {
				t.Errorf("SubmitMany %s/%s: %v", o.Tenant, o.Project, err)
			}
			if _, err := e.cl.AddSchedule(ctx, cluster.Schedule{Name: "s", Workflow: "cluster", Cron: "@hourly", Input: &in, Tenant: o.Tenant, Project: o.Project}); !errors.Is(err, cluster.ErrBadSchedule) || !errors.Is(err, store.ErrBadScope) {
				t.Errorf("AddSchedule %s/%s: %v", o.Tenant, o.Project, err)
			}
			q := cluster.Quota{Tenant: o.Tenant, Project: o.Project, QueuedRuns: 1}
			if q.Project == "" {
				q.Project = "web"
			}
			if _, err := e.cl.SetQuota(ctx, q); !errors.Is(err, cluster.ErrBadQuota) || !errors.Is(err, store.ErrBadScope) {
				t.Errorf("SetQuota %s/%s: %v", q.Tenant, q.Project, err)
			}
		}
	}
	for _, label := range []string{store.LabelTenant, store.LabelProject} {
		for _, name := range []string{".", ".."} {
			infos, err := e.rt.Store.List(ctx, store.Filter{Labels: map[string]string{label: name}})
			if err != nil || len(infos) != 0 {
				t.Fatalf("sessions labelled %s=%s: %d, %v", label, name, len(infos), err)
			}
		}
	}
}

// A schedule named "." or ".." (or dots alone) is refused: its name would
// read as a path, and /v1/schedules/.. cannot name it.
func TestScheduleNamesRefuseDots(t *testing.T) {
	home := t.TempDir()
	e := newEnv(t, home, "sqlite://"+filepath.Join(home, "rath.db"))
	ctx := context.Background()
	in := `{"steps":1,"latency_ms":1,"idempotent":true}`
	for _, name := range []string{".", "..", "..."} {
		if _, err := e.cl.AddSchedule(ctx, cluster.Schedule{Name: name, Workflow: "cluster", Cron: "@hourly", Input: &in, Paused: true}); !errors.Is(err, cluster.ErrBadSchedule) {
			t.Errorf("AddSchedule named %q: %v", name, err)
		}
	}
	for _, name := range []string{"a.b", ".hidden", "v1.."} {
		if _, err := e.cl.AddSchedule(ctx, cluster.Schedule{Name: name, Workflow: "cluster", Cron: "@hourly", Input: &in, Paused: true}); err != nil {
			t.Errorf("AddSchedule named %q: %v", name, err)
		}
	}
}
