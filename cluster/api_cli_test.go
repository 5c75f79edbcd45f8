package cluster_test

import (
	"bytes"
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
		// A wrong token is the server's refusal, said plainly.
		cmd := exec.Command(rathBin, "--home", t.TempDir(), "--server", base, "--server-token", "nope", "status")
		b, _ := cmd.CombinedOutput()
		if cmd.ProcessState.ExitCode() == 0 || !strings.Contains(string(b), "unauthenticated") {
			t.Fatalf("a wrong token: %s", b)
		}
	})
}
