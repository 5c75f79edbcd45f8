package cluster_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// A cluster run that ends leaves none of its sessions open, active or
// paused, nor its input: closed when it is done, failed when it failed
// (here: its approval denied) or was cancelled; its steps are recorded on
// it. rath ls
// lists the runs with their states, and their sessions only with --all.
func TestEndedRunsEndTheirSessions(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		e.worker("w1")
		yes := e.submit(`{"steps":4,"latency_ms":1,"idempotent":true,"approval":true}`)
		no := e.submit(`{"steps":4,"latency_ms":1,"idempotent":true,"approval":true}`)
		long := e.submit(`{"steps":400,"latency_ms":30,"idempotent":true}`)
		e.waitState(yes, cluster.StateWaitingApproval, 30*time.Second)
		e.waitState(no, cluster.StateWaitingApproval, 30*time.Second)
		if err := e.cl.Approve(ctx, yes, true, "ann", "fine"); err != nil {
			t.Fatal(err)
		}
		if err := e.cl.Approve(ctx, no, false, "bob", "not now"); err != nil {
			t.Fatal(err)
		}
		var inner []store.Info
		e.waitFor("effects of the long run", 30*time.Second, func() bool { return e.effectsOf(long) >= 3 })
		if err := e.cl.Cancel(ctx, long, "carol", "enough"); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			run   session.ID
			state cluster.State
			want  store.Status
		}{{yes, cluster.StateDone, store.StatusClosed}, {no, cluster.StateFailed, store.StatusFailed}, {long, cluster.StateCancelled, store.StatusFailed}} {
			e.waitState(c.run, c.state, 30*time.Second)
			infos, err := e.rt.Store.List(ctx, store.Filter{Labels: map[string]string{runctx.Label: string(c.run)}})
			if err != nil {
				t.Fatal(err)
			}
			ended := 0
			for _, i := range infos {
				switch {
				case i.Status == store.StatusOpen || i.Status == store.StatusActive || i.Status == store.StatusPaused:
					t.Errorf("run %s is %s, its session %s (%s) is %s", c.run, c.state, i.ID, i.Lineage.Op, i.Status)
				case i.Status == c.want:
					ended++
				}
			}
			if ended == 0 {
				t.Errorf("run %s is %s: none of its %d sessions is %s", c.run, c.state, len(infos), c.want)
			}
			if in := e.info(c.run); in.Labels[runctx.StepsLabel] == "" || in.Status != c.want {
				t.Errorf("run %s is %s: its input is %s, steps %q", c.run, c.state, in.Status, in.Labels[runctx.StepsLabel])
			}
			inner = append(inner, infos...)
		}
		out, errOut, code := e.rath("ls")
		if code != 0 {
			t.Fatalf("rath ls: %d %s", code, errOut)
		}
		for _, r := range []struct {
			run   session.ID
			state cluster.State
		}{{yes, cluster.StateDone}, {no, cluster.StateFailed}, {long, cluster.StateCancelled}} {
			if !strings.Contains(out, string(r.run)+"  "+string(r.state)) {
				t.Errorf("rath ls does not list run %s %s:\n%s", r.run, r.state, out)
			}
		}
		all, _, _ := e.rath("ls", "--all")
		for _, i := range inner {
			if strings.Contains(out, string(i.ID)) || !strings.Contains(all, string(i.ID)) {
				t.Errorf("session %s: listed by rath ls, or not by rath ls --all:\n%s\n--all:\n%s", i.ID, out, all)
			}
		}
	})
}
