package cluster_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/cluster"
	clusterdemo "github.com/openrath/rath/examples/14_cluster"
	"github.com/openrath/rath/store"
)

// A run on a host-local sandbox whose host loses its worker goes on on
// another host, with its workspace rebuilt from its journal as of its last
// committed step: every effect is in that workspace once, the run says it
// moved, and its chain verifies.
func TestHostLocalRunMovesHosts(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		homeA, homeB := t.TempDir(), t.TempDir()
		a := e.worker("a", "--host", "host-a", "--home", homeA, "--slice-steps", "1000")
		const steps = 30
		id := e.submit(`{"steps":30,"latency_ms":20,"idempotent":true,"workspace":true}`)
		e.waitFor("the run on host-a with effects", 30*time.Second, func() bool {
			r := e.run(id)
			return r.Worker == "a" && r.Host == "host-a" && len(e.effectCounts()) >= 5
		})
		if r := e.run(id); r.Placed != "local" || !strings.Contains(r.Pinned, "journaled") {
			t.Fatalf("a run on a local sandbox: placed %q, pinned %q", r.Placed, r.Pinned)
		}
		// a dies before b starts: on a loaded machine a run left going
		// while b starts may well end on a.
		a.kill()
		e.worker("b", "--host", "host-b", "--home", homeB)
		r := e.waitState(id, cluster.StateDone, 90*time.Second)
		if r.Worker != "b" || r.Host != "host-b" {
			t.Fatalf("finished by %s on %s", r.Worker, r.Host)
		}
		e.exactlyOnce(id, steps)
		e.verify(id)
		logs, err := filepath.Glob(filepath.Join(homeB, "workspaces", "*", clusterdemo.WorkspaceLog))
		if err != nil || len(logs) != 1 {
			t.Fatalf("workspaces on host-b with %s: %v (%v)", clusterdemo.WorkspaceLog, logs, err)
		}
		data, err := os.ReadFile(logs[0])
		if err != nil {
			t.Fatal(err)
		}
		keys := map[string]int{}
		ns := map[string]bool{}
		for line := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
			f := strings.Fields(line)
			if len(f) != 2 {
				t.Fatalf("workspace log line %q", line)
			}
			keys[f[0]]++
			ns[f[1]] = true
		}
		if len(keys) != steps || len(ns) != steps {
			t.Fatalf("the workspace holds %d keys and %d effect numbers, want %d of each:\n%s", len(keys), len(ns), steps, data)
		}
		for k, n := range keys {
			if n != 1 {
				t.Fatalf("effect %s is in the workspace %d times", k, n)
			}
		}
		_, history, err := e.cl.RunStatus(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		moved := false
		for _, c := range history {
			if d := c.Decision; d != nil && d.Choice == "b" && strings.Contains(d.Reason, "moved it from host host-a") {
				moved = true
			}
		}
		if !moved {
			t.Fatalf("no decision says the run moved hosts: %v", history)
		}
		journals, err := e.rt.Store.List(context.Background(), store.Filter{Labels: map[string]string{cluster.LabelJournalOf: string(id)}})
		if err != nil || len(journals) != 1 || journals[0].Status != store.StatusClosed {
			t.Fatalf("the run's journals after it ended: %+v (%v); want one, closed", journals, err)
		}
	})
}
