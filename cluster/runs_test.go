package cluster_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/session"
)

// Runs are listed newest first with their filters, counted while they
// wait, and the workers and pools are reported; the approvals list gives
// the paused head and what is asked, for a gate and for a tool call.
func TestListRunsAndApprovals(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		// No worker: the runs wait, unroutable.
		gate := e.submit(`{"steps":2,"latency_ms":1,"idempotent":true,"approval":true}`)
		tool := e.submit(`{"steps":2,"latency_ms":1,"idempotent":true,"tool_approval":true}`)
		plain := e.submit(`{"steps":1,"latency_ms":1,"idempotent":true}`)
		all, err := e.cl.ListRuns(ctx, cluster.RunFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if ids := runIDs(all); !slices.Equal(ids, []session.ID{plain, tool, gate}) {
			t.Fatalf("listed %v, want newest first %v", ids, []session.ID{plain, tool, gate})
		}
		for _, r := range all {
			if r.State != cluster.StateUnroutable || r.Created.IsZero() || r.Workflow != "cluster" {
				t.Fatalf("run %+v", r)
			}
		}
		if n, err := e.cl.Queued(ctx, nil); err != nil || n != 3 {
			t.Fatalf("queued %d %v, want 3", n, err)
		}
		two, err := e.cl.ListRuns(ctx, cluster.RunFilter{Limit: 2, Until: all[0].Created.Add(time.Microsecond)})
		if err != nil || len(two) != 2 || two[0].ID != plain {
			t.Fatalf("limit 2: %v %v", runIDs(two), err)
		}
		if none, err := e.cl.ListRuns(ctx, cluster.RunFilter{Workflow: "nope"}); err != nil || len(none) != 0 {
			t.Fatalf("another workflow: %v %v", runIDs(none), err)
		}
		for _, bad := range []cluster.State{cluster.StateCancelling, "sleeping"} {
			if _, err := e.cl.ListRuns(ctx, cluster.RunFilter{State: bad}); !errors.Is(err, cluster.ErrBadFilter) {
				t.Fatalf("state %q: %v", bad, err)
			}
		}
		if err := e.cl.Cancel(ctx, plain, "ana", "not needed"); err != nil {
			t.Fatal(err)
		}
		cancelled, err := e.cl.ListRuns(ctx, cluster.RunFilter{State: cluster.StateCancelled})
		if err != nil || len(cancelled) != 1 || cancelled[0].ID != plain || cancelled[0].Cancel != "ana: not needed" {
			t.Fatalf("cancelled: %+v %v", cancelled, err)
		}

		e.worker("a")
		e.waitState(gate, cluster.StateWaitingApproval, 60*time.Second)
		e.waitState(tool, cluster.StateWaitingApproval, 60*time.Second)
		as, err := e.cl.Approvals(ctx, cluster.RunFilter{})
		if err != nil || len(as) != 2 {
			t.Fatalf("approvals: %+v %v", as, err)
		}
		for _, a := range as {
			r := e.run(a.Run)
			paused, err := e.rt.Store.Load(ctx, r.Output)
			if err != nil {
				t.Fatal(err)
			}
			if a.Session != r.Output || a.Head != paused.Head() || len(a.Asks) == 0 {
				t.Fatalf("approval %+v; the run paused with %s at %s", a, r.Output, paused.Head())
			}
			if a.Run == tool && !strings.HasPrefix(a.Asks[0], "tool call record_effect") {
				t.Fatalf("the tool approval asks %q", a.Asks)
			}
		}
		if n, err := e.cl.Queued(ctx, nil); err != nil || n != 0 {
			t.Fatalf("queued %d %v, want 0", n, err)
		}
		ws, err := e.cl.Workers(ctx)
		if err != nil || len(ws) != 1 || !ws[0].Alive {
			t.Fatalf("workers: %+v %v", ws, err)
		}
		qs, err := e.cl.Queues(ctx)
		if err != nil || len(qs) != 1 || qs[0].Queue != ws[0].Pool || !slices.Equal(qs[0].Workers, []string{ws[0].ID}) {
			t.Fatalf("queues: %+v %v (worker in %s)", qs, err, ws[0].Pool)
		}
	})
}

func runIDs(rs []cluster.RunItem) []session.ID {
	ids := make([]session.ID, len(rs))
	for i, r := range rs {
		ids[i] = r.ID
	}
	return ids
}
