package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/openrath/rath"
	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/sandbox/e2b"
	"github.com/openrath/rath/sandbox/e2b/e2bfake"
	"github.com/openrath/rath/session"
)

// TestSandboxesLsAndGC lists the sandboxes rath created on a (fake) E2B
// and collects only the orphans: created on this host by a process that is
// gone, and held by no unfinished cluster run.
func TestSandboxesLsAndGC(t *testing.T) {
	home := t.TempDir()
	t.Setenv("RATH_HOME", home)
	t.Setenv("CUBE_API_URL", "")
	srv, err := e2bfake.Start(e2bfake.Options{APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if err := e2b.Use(e2b.E2B, e2b.Options{APIURL: srv.URL(), APIKey: "k", Domain: srv.Domain(), Transport: srv.Transport(true)}); err != nil {
		t.Fatal(err)
	}
	defer e2b.Use(e2b.E2B, e2b.FromEnv(e2b.E2B))

	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	create := func(meta map[string]string) string {
		meta["rath"] = "1"
		body, _ := json.Marshal(map[string]any{"templateID": "base", "metadata": meta})
		req, _ := http.NewRequest("POST", srv.URL()+"/sandboxes", bytes.NewReader(body))
		req.Header.Set("X-API-Key", "k")
		req.Header.Set("Content-Type", "application/json")
		resp, err := (&http.Client{Transport: srv.Transport(true)}).Do(req)
		if err != nil || resp.StatusCode != 201 {
			t.Fatalf("create: %v %v", resp, err)
		}
		defer resp.Body.Close()
		var out struct {
			SandboxID string `json:"sandboxID"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return out.SandboxID
	}
	orphan := create(map[string]string{"rath.host": host, "rath.pid": strconv.Itoa(dead.Process.Pid), "rath.session": "sess_orphan"})
	live := create(map[string]string{"rath.host": host, "rath.pid": strconv.Itoa(os.Getpid())})
	elsewhere := create(map[string]string{"rath.host": "another-host", "rath.pid": "1"})
	held := create(map[string]string{"rath.host": host, "rath.pid": strconv.Itoa(dead.Process.Pid)})

	// The held one is recorded on a cluster run that has not ended.
	rt, err := rath.Open(context.Background(), rath.Config{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	in := session.FromUser("a run")
	if err := rt.Store.Commit(context.Background(), in, ""); err != nil {
		t.Fatal(err)
	}
	if err := rt.Store.SetLabels(context.Background(), in.ID(), map[string]string{
		cluster.LabelRun: `{"workflow":"w"}`, cluster.LabelState: string(cluster.StateRunning), cluster.LabelRemotePrefix + held: e2b.E2B,
	}); err != nil {
		t.Fatal(err)
	}
	rt.Close()

	run := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), args, strings.NewReader(""), &out, &errb)
		return out.String(), errb.String(), code
	}
	out, errs, code := run("sandboxes", "ls", "--json")
	if code != 0 {
		t.Fatalf("ls: %d %s", code, errs)
	}
	var listed []listedSandbox
	if err := json.Unmarshal([]byte(out), &listed); err != nil || len(listed) != 4 {
		t.Fatalf("ls --json = %s (%v)", out, err)
	}
	for _, l := range listed {
		if l.Orphan != (l.ID == orphan) {
			t.Fatalf("%s: orphan %v (%s)", l.ID, l.Orphan, l.Why)
		}
		if l.ID == held && !strings.Contains(l.Why, "held by cluster run "+string(in.ID())) {
			t.Fatalf("the held sandbox: %s", l.Why)
		}
	}
	if !strings.Contains(errs, "skipping cube") {
		t.Fatalf("an unconfigured backend was not noted: %q", errs)
	}
	out, _, code = run("sandboxes", "gc", "--dry-run")
	if code != 0 || !strings.Contains(out, "would kill e2b sandbox "+orphan) || srv.Sandboxes() != 4 {
		t.Fatalf("gc --dry-run: %d %s (%d left)", code, out, srv.Sandboxes())
	}
	out, _, code = run("sandboxes", "gc")
	if code != 0 || !strings.Contains(out, "killed e2b sandbox "+orphan) || srv.Sandboxes() != 3 {
		t.Fatalf("gc: %d %s (%d left)", code, out, srv.Sandboxes())
	}
	out, _, _ = run("sandboxes", "ls")
	for _, id := range []string{live, elsewhere, held} {
		if !strings.Contains(out, id) {
			t.Fatalf("gc killed %s:\n%s", id, out)
		}
	}
	if _, errs, code := run("sandboxes", "ls", "--backend", "local"); code == 0 || !strings.Contains(errs, "not a remote sandbox backend") {
		t.Fatalf("--backend local: %d %s", code, errs)
	}
}
