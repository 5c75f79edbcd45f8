package placement_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/openrath/rath"
	placement "github.com/openrath/rath/examples/03_placement"
	"github.com/openrath/rath/export"
	"github.com/openrath/rath/sandbox"
)

// required reports whether RATH_REQUIRE names backend: then it must run.
func required(backend string) bool {
	for _, n := range strings.Split(os.Getenv("RATH_REQUIRE"), ",") {
		if strings.TrimSpace(n) == backend {
			return true
		}
	}
	return false
}

// remote are the remote backends; with their variables unset they run
// against in-process fakes, so here they always run.
var remote = map[string]string{"e2b": "E2B_API_KEY", "cube": "CUBE_API_URL", "opensandbox": "OPEN_SANDBOX_API_URL"}

func TestPlacement(t *testing.T) {
	t.Setenv("RATH_OFFLINE", "1")
	for _, env := range remote {
		t.Setenv(env, "")
	}
	home := t.TempDir()
	t.Setenv("RATH_HOME", home) // where the sandboxes' workspaces go
	placement.Log = io.Discard
	ctx := context.Background()
	rt, err := rath.Open(ctx, rath.Config{Home: home, Policies: "../policies"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })

	out, err := rt.Run(ctx, "placement")
	if err != nil {
		t.Fatal(err)
	}
	stages := placement.Stages(out)
	sandboxes := map[string]bool{}
	for _, st := range stages {
		if st.Skipped != "" {
			if _, isRemote := remote[st.Backend]; st.Backend == "local" || isRemote || required(st.Backend) {
				t.Fatalf("%s must run here, but: %s", st.Backend, st.Skipped)
			}
			if b, err := sandbox.Lookup(st.Backend); st.Backend == "bwrap" && err == nil && b.Available(ctx) == nil {
				t.Errorf("bwrap is available but was skipped: %s", st.Skipped)
			}
			t.Logf("%s did not run here: %s", st.Backend, st.Skipped)
			continue
		}
		want := "from-" + st.Backend + ".txt"
		if st.Sandbox == "" || sandboxes[st.Sandbox] {
			t.Errorf("%s ran in sandbox %q (seen: %v)", st.Backend, st.Sandbox, sandboxes)
		}
		sandboxes[st.Sandbox] = true
		// Each listing shows only the file written on that backend.
		if !slices.Equal(st.Files, []string{want}) {
			t.Errorf("%s saw %v, want only %s", st.Backend, st.Files, want)
		}
		if _, isRemote := remote[st.Backend]; isRemote {
			// A remote sandbox: its placement says where it lives, and its
			// workspace is ~/workspace there (here, through the fake).
			if r := st.Remote; r == nil || r.Provider != st.Backend || r.URL == "" || r.Template == "" {
				t.Errorf("%s placement records %+v", st.Backend, st.Remote)
			}
			if !strings.HasSuffix(st.Dir, "/workspace") {
				t.Errorf("%s ran in %s, want a workspace directory", st.Backend, st.Dir)
			}
			continue
		}
		if !sandbox.ValidID(st.Sandbox) {
			t.Errorf("%s ran in sandbox %q", st.Backend, st.Sandbox)
		}
		if st.Backend != "local" && st.Dir != "/workspace" {
			t.Errorf("%s ran in %s, want /workspace", st.Backend, st.Dir)
		}
		// On the host, each workspace holds its own file only.
		ents, err := os.ReadDir(filepath.Join(sandbox.WorkspacesDir(), st.Sandbox))
		if err != nil || len(ents) != 1 || ents[0].Name() != want {
			t.Errorf("%s workspace: %v, %v", st.Backend, ents, err)
		}
	}

	// Every tool result names its stage's sandbox; write_file's records
	// the file it added.
	var adds int
	for _, c := range out.All() {
		r := c.ToolResult
		if r == nil {
			continue
		}
		backend, _, _ := strings.Cut(c.Node, "/")
		st := stages[slices.IndexFunc(stages, func(s placement.Stage) bool { return s.Backend == backend })]
		if r.Error != nil || r.SandboxID != st.Sandbox {
			t.Errorf("%s %s: sandbox %s (want %s), error %v", backend, r.Tool, r.SandboxID, st.Sandbox, r.Error)
		}
		if r.Tool == "write_file" {
			adds++
			if len(r.Effects) != 1 || r.Effects[0].Path != "from-"+backend+".txt" || r.Effects[0].Op != "added" {
				t.Errorf("%s write_file effects %+v", backend, r.Effects)
			}
		}
	}
	if adds != len(sandboxes) {
		t.Errorf("%d files written for %d sandboxes", adds, len(sandboxes))
	}
	last, _ := out.Last()
	if last.Note == nil || !strings.HasPrefix(last.Note.Text, "Placement report:") || last.Node != "report/report#1" {
		t.Errorf("last chunk %+v", last)
	}
	t.Log(last.Note.Text)

	// The run's dossier shows where each sandbox lived.
	d, err := export.BuildDossier(ctx, rt.Store, out.ID())
	if err != nil {
		t.Fatal(err)
	}
	providers := map[string]bool{}
	for _, e := range d.Environment {
		if e.Remote != nil && e.SandboxID != "" {
			providers[e.Remote.Provider] = true
		}
	}
	for b := range remote {
		if !providers[b] {
			t.Errorf("the dossier shows no %s sandbox: %+v", b, d.Environment)
		}
	}

	again, err := rt.Replay(ctx, out.ID())
	if err != nil {
		t.Fatal(err)
	}
	if again.Head() != out.Head() {
		t.Errorf("replay head %s, want %s", again.Head(), out.Head())
	}
}
