package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/session"
)

// remote runs the CLI against the Agent Server at base, from a home of its
// own with no store: whatever it shows came through the API.
func remote(t *testing.T, base string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(rathBin, append([]string{"--home", t.TempDir(), "--server", base, "--server-token", "tok"}, args...)...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

// The cluster's commands drive a remote cluster through `rath serve` with
// --server: submit (and follow), status of the cluster and of a run,
// pending, approve, cancel.
func TestRemoteCLI(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		base := e.serve("api", "--token", "tok")
		e.worker("a")
		out, errOut, code := remote(t, base, "submit", "cluster", "--input", `{"steps":2,"latency_ms":1,"idempotent":true}`, "--wait")
		if code != 0 || !strings.Contains(errOut, "done: output ses_") {
			t.Fatalf("submit --wait: exit %d\n%s\n%s", code, out, errOut)
		}
		done := session.ID(strings.TrimSpace(out))
		e.waitState(done, cluster.StateDone, 10*time.Second)
		e.exactlyOnce(done, 2)

		out, errOut, code = remote(t, base, "status")
		if code != 0 || !strings.Contains(out, string(done)) || !strings.Contains(out, "WORKERS") || !strings.Contains(out, " a ") && !strings.Contains(out, "  a") {
			t.Fatalf("status: exit %d\n%s\n%s", code, out, errOut)
		}
		out, errOut, code = remote(t, base, "status", string(done))
		if code != 0 || !strings.Contains(out, "cluster.route") || !strings.Contains(out, "done") {
			t.Fatalf("status ID: exit %d\n%s\n%s", code, out, errOut)
		}

		out, errOut, code = remote(t, base, "submit", "cluster", "--input", `{"steps":2,"latency_ms":1,"idempotent":true,"approval":true}`)
		if code != 0 {
			t.Fatalf("submit: exit %d: %s", code, errOut)
		}
		gated := session.ID(strings.TrimSpace(out))
		e.waitState(gated, cluster.StateWaitingApproval, 60*time.Second)
		if out, errOut, code = remote(t, base, "pending"); code != 0 || !strings.Contains(out, string(gated)) {
			t.Fatalf("pending: exit %d\n%s\n%s", code, out, errOut)
		}
		if _, errOut, code = remote(t, base, "approve", string(gated), "--by", "ana"); code != 0 {
			t.Fatalf("approve: exit %d: %s", code, errOut)
		}
		e.waitState(gated, cluster.StateDone, 60*time.Second)

		out, _, _ = remote(t, base, "submit", "cluster", "--input", `{"steps":2}`, "--needs", "region=mars")
		stuck := session.ID(strings.TrimSpace(out))
		if _, errOut, code = remote(t, base, "cancel", string(stuck), "--reason", "no such region"); code != 0 {
			t.Fatalf("cancel: exit %d: %s", code, errOut)
		}
		if r := e.run(stuck); r.State != cluster.StateCancelled {
			t.Fatalf("the cancelled run is %s", r.State)
		}
		// Schedules and webhooks, through the server too.
		if _, errOut, code := remote(t, base, "schedule", "add", "hourly", "--workflow", "cluster", "--cron", "@hourly", "--input", `{"steps":1}`); code != 0 {
			t.Fatalf("schedule add: exit %d: %s", code, errOut)
		}
		if out, errOut, code := remote(t, base, "schedule", "ls"); code != 0 || !strings.Contains(out, "hourly") || !strings.Contains(out, "@hourly") {
			t.Fatalf("schedule ls: exit %d\n%s\n%s", code, out, errOut)
		}
		if _, _, code := remote(t, base, "schedule", "rm", "hourly"); code != 0 {
			t.Fatal("schedule rm failed")
		}
		if s, _ := e.cl.Schedules(context.Background()); len(s) != 0 {
			t.Fatalf("the schedule is still there: %+v", s)
		}
		out, errOut, code = remote(t, base, "--json", "webhooks", "add", "https://example.com/hook")
		var hook struct {
			ID     session.ID `json:"id"`
			Secret string     `json:"secret"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &hook) != nil || hook.Secret == "" {
			t.Fatalf("webhooks add: exit %d\n%s\n%s", code, out, errOut)
		}
		if out, _, code := remote(t, base, "webhooks", "ls"); code != 0 || !strings.Contains(out, "https://example.com/hook") || strings.Contains(out, hook.Secret) {
			t.Fatalf("webhooks ls: exit %d\n%s", code, out)
		}
		if _, errOut, code := remote(t, base, "webhooks", "rm", string(hook.ID)); code != 0 {
			t.Fatalf("webhooks rm: exit %d: %s", code, errOut)
		}

		// A wrong token is the server's refusal, said plainly.
		cmd := exec.Command(rathBin, "--home", t.TempDir(), "--server", base, "--server-token", "nope", "status")
		b, _ := cmd.CombinedOutput()
		if cmd.ProcessState.ExitCode() == 0 || !strings.Contains(string(b), "unauthenticated") {
			t.Fatalf("a wrong token: %s", b)
		}
	})
}
