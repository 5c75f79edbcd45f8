package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/cluster"
	clusterdemo "github.com/openrath/rath/examples/14_cluster"
	"github.com/openrath/rath/sandbox/opensandbox"
	"github.com/openrath/rath/sandbox/opensandbox/osfake"
	"github.com/openrath/rath/session"
)

// remoteFake starts a fake OpenSandbox that the worker processes reach
// through the environment, releasing sandboxes as onClose says, and a
// client of it.
func remoteFake(t *testing.T, onClose string) (*osfake.Server, *opensandbox.Backend) {
	const key = "os_test_key_not_a_secret"
	srv, err := osfake.Start(osfake.Options{APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	t.Setenv("OPEN_SANDBOX_API_URL", srv.URL())
	t.Setenv("OPEN_SANDBOX_API_KEY", key)
	t.Setenv("RATH_REMOTE_ON_CLOSE", onClose)
	return srv, opensandbox.New(opensandbox.Options{APIURL: srv.URL(), APIKey: key})
}

// A run placed on a remote sandbox is pinned to no host: when its worker
// is killed, a worker on another host takes it over and reattaches the
// same sandbox (nothing to rebuild), every effect lands in its workspace
// once, and the run's end releases the sandbox (paused here, as
// RATH_REMOTE_ON_CLOSE says), which no worker's exit did before.
func TestRemoteRunMovesFreely(t *testing.T) {
	srv, client := remoteFake(t, opensandbox.OnClosePause)

	backends(t, func(t *testing.T, e *env) {
		const steps = 20
		a := e.worker("a", "--host", "host-a", "--slice-steps", "1000")
		id := e.submit(`{"steps":20,"latency_ms":20,"idempotent":true,"workspace":true,"sandbox":"opensandbox"}`)
		e.waitFor("the run on worker a with effects", 30*time.Second, func() bool {
			return e.run(id).Worker == "a" && len(e.effectCounts()) >= 5
		})
		if r := e.run(id); r.Placed != opensandbox.Name || r.Pinned != "" || r.Host != "" {
			t.Fatalf("a run on a remote sandbox: placed %q, pinned %q to host %q", r.Placed, r.Pinned, r.Host)
		}
		if out, _, _ := e.rath("status", string(id)); !strings.Contains(out, "pinned to no host") {
			t.Fatalf("status of a run on a remote sandbox does not say it moves freely:\n%s", out)
		}
		// a dies before b starts: on a loaded machine a run left going
		// while b starts may well end on a.
		a.kill()
		e.worker("b", "--host", "host-b")
		r := e.waitState(id, cluster.StateDone, 90*time.Second)
		if r.Worker != "b" {
			t.Fatalf("finished by %s", r.Worker)
		}
		e.exactlyOnce(id, steps)
		e.verify(id)

		out, err := e.rt.Store.Load(context.Background(), r.Output)
		if err != nil {
			t.Fatal(err)
		}
		ids := map[string]bool{}
		for _, c := range out.All() {
			if p := c.Placement; p != nil && p.SandboxID != "" {
				if p.Backend != opensandbox.Name || p.Remote == nil || p.Remote.Provider != opensandbox.Name || p.Remote.URL != srv.URL() {
					t.Fatalf("placement %+v", p)
				}
				ids[p.SandboxID] = true
			}
		}
		if len(ids) != 1 {
			t.Fatalf("the run was placed on sandboxes %v; want one, reattached by worker b", ids)
		}
		var sbID string
		for sid := range ids {
			sbID = sid
		}
		listed, err := client.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		state := ""
		for _, l := range listed {
			if l.ID == sbID {
				state = l.State
				if l.Session == "" {
					t.Errorf("sandbox %s does not name its session", sbID)
				}
			}
		}
		if state != "Paused" {
			t.Fatalf("after the run ended its sandbox %s is %q, want Paused (released)", sbID, state)
		}

		// The workspace, attached again (which resumes it), holds every
		// effect once.
		sb, err := client.Attach(context.Background(), sbID, session.Spec{})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = client.Kill(context.Background(), sbID) }()
		data, err := sb.ReadFile(context.Background(), clusterdemo.WorkspaceLog)
		if err != nil {
			t.Fatal(err)
		}
		_ = sb.Close()
		seen := map[string]int{}
		for line := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
			f := strings.Fields(line)
			if len(f) != 2 {
				t.Fatalf("workspace log line %q", line)
			}
			seen[f[1]]++
		}
		if len(seen) != steps {
			t.Fatalf("the workspace holds %d effects, want %d:\n%s", len(seen), steps, data)
		}
		for n, c := range seen {
			if c != 1 {
				t.Fatalf("effect %s is in the workspace %d times", n, c)
			}
		}
	})
}

// A run on a remote sandbox that waits for a person pauses its sandbox (no
// worker holds it, so its lifetime would run out meanwhile); the approved
// run's next slice resumes it, finds the workspace as it was, and its end
// releases it.
func TestWaitingRunPausesItsRemoteSandbox(t *testing.T) {
	srv, client := remoteFake(t, opensandbox.OnCloseKill)
	state := func(t *testing.T) (string, string) {
		t.Helper()
		listed, err := client.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(listed) != 1 {
			return "", fmt.Sprintf("%d sandboxes", len(listed))
		}
		return listed[0].ID, listed[0].State
	}

	backends(t, func(t *testing.T, e *env) {
		e.worker("w1")
		id := e.submit(`{"steps":6,"latency_ms":1,"idempotent":true,"approval":true,"workspace":true,"sandbox":"opensandbox"}`)
		e.waitState(id, cluster.StateWaitingApproval, 30*time.Second)
		sb, st := state(t)
		if st != "Paused" {
			t.Fatalf("the waiting run's sandbox %s is %s, want Paused", sb, st)
		}
		if _, errOut, code := e.rath("approve", string(id), "--by", "ann"); code != 0 {
			t.Fatalf("approve: %d %s", code, errOut)
		}
		r := e.waitState(id, cluster.StateDone, 60*time.Second)
		e.exactlyOnce(id, 6)
		e.verify(id)
		out, err := e.rt.Store.Load(context.Background(), r.Output)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range out.All() {
			if p := c.Placement; p != nil && p.SandboxID != "" && p.SandboxID != sb {
				t.Fatalf("the approved run went on in sandbox %s, not in its paused %s", p.SandboxID, sb)
			}
		}
		// The run's end is recorded first, then its sandboxes are
		// released (Cluster.ended): wait for the release.
		e.waitFor("the run's sandbox killed on release", 30*time.Second, func() bool { return srv.Sandboxes() == 0 })
	})
}
