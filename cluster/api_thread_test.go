package cluster_test

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/client"
	"github.com/openrath/rath/cluster"
)

// Over /v1, a run submitted on a session that a run is working on waits
// behind it — the 201 says so — and then continues from its output; the
// same Idempotency-Key and session give the same run back, and the key
// with another session is refused.
func TestRunsOnASessionOverAPI(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		base := e.serve("api")
		c, err := client.New(base)
		if err != nil {
			t.Fatal(err)
		}
		s := e.commitSession("a conversation over HTTP")
		e.worker("a", "--concurrency", "2")
		slow, quick := `{"steps":2,"latency_ms":300,"idempotent":false}`, `{"steps":3,"latency_ms":1,"idempotent":false}`
		first, err := c.SubmitRun(ctx, client.RunRequest{Workflow: "cluster", Input: &slow, Session: s})
		if err != nil {
			t.Fatal(err)
		}
		second, err := c.SubmitRun(ctx, client.RunRequest{Workflow: "cluster", Input: &quick, Session: s, Key: "turn-2"})
		if err != nil {
			t.Fatal(err)
		}
		if second.State != "behind" || second.Behind != first.ID || second.Session != s {
			t.Fatalf("the second run on a busy session: %s behind %q on %q", second.State, second.Behind, second.Session)
		}
		again, err := c.SubmitRun(ctx, client.RunRequest{Workflow: "cluster", Input: &quick, Session: s, Key: "turn-2"})
		if err != nil || again.ID != second.ID {
			t.Fatalf("the same key and session: %+v %v", again, err)
		}
		other := e.commitSession("another conversation")
		if _, err := c.SubmitRun(ctx, client.RunRequest{Workflow: "cluster", Input: &quick, Session: other, Key: "turn-2"}); err == nil {
			t.Fatal("the same key on another session was accepted")
		}
		waitRun(t, c, first.ID, "done")
		done := waitRun(t, c, second.ID, "done")
		if done.Behind != "" {
			t.Fatalf("the second run, done, still waits behind %s", done.Behind)
		}
		if got := e.effectOrder(); strings.Join(got, ",") != strings.Join([]string{string(first.ID) + " 1", string(first.ID) + " 2", string(second.ID) + " 3"}, ",") {
			t.Fatalf("effects %v", got)
		}
		for r, err := range c.Runs(ctx, client.RunFilter{State: "behind"}) {
			t.Fatalf("a run behind after both ended: %+v %v", r, err)
		}
	})
}

// A run left behind a run that ended without releasing it (its worker
// died between the two) is released by a worker's reroute loop.
func TestStrandedRunReleased(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		s := e.commitSession("a conversation whose worker died")
		first := e.submitOn(s, `{"steps":1,"latency_ms":1,"idempotent":true}`)
		second := e.submitOn(s, `{"steps":2,"latency_ms":1,"idempotent":true}`)
		if r := e.run(second); r.State != cluster.StateBehind || r.Behind != first {
			t.Fatalf("the second run is %s behind %q", r.State, r.Behind)
		}
		// The first ends as no worker would leave it: failed, the run
		// behind it not released.
		if err := e.rt.Store.SetLabel(ctx, first, cluster.LabelState, string(cluster.StateFailed)); err != nil {
			t.Fatal(err)
		}
		e.worker("a")
		r := e.waitState(second, cluster.StateDone, 60*time.Second)
		if r.Behind != "" || e.effectsOf(second) != 2 || e.effectsOf(first) != 0 {
			t.Fatalf("released: behind %q, effects %d (first %d)", r.Behind, e.effectsOf(second), e.effectsOf(first))
		}
	})
}

// The client's Run holds every field of the cluster's record (but its
// fencing epoch and job id, which are the cluster's own), and nothing
// else but its creation time: the two do not drift apart.
func TestClientRunMirrorsClusterRun(t *testing.T) {
	own := []string{"epoch", "job"}
	extra := []string{"created"}
	cl, cli := jsonNames(reflect.TypeFor[cluster.Run]()), jsonNames(reflect.TypeFor[client.Run]())
	for _, n := range cl {
		if !slices.Contains(cli, n) && !slices.Contains(own, n) {
			t.Errorf("client.Run has no %q", n)
		}
	}
	for _, n := range cli {
		if !slices.Contains(cl, n) && !slices.Contains(extra, n) {
			t.Errorf("client.Run's %q is not in cluster.Run", n)
		}
	}
}

// jsonNames are the JSON names of a struct's exported fields.
func jsonNames(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
	}
	return out
}
