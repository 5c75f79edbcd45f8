package osfake_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/opensandbox"
	"github.com/openrath/rath/sandbox/opensandbox/osfake"
	"github.com/openrath/rath/sandbox/remote"
	"github.com/openrath/rath/session"
)

const testKey = "osfake_test_key_not_a_secret"

// start starts a fake on o.Dir and a backend that reaches it.
func start(t *testing.T, o osfake.Options) (*osfake.Server, *opensandbox.Backend) {
	t.Helper()
	o.APIKey = testKey
	srv, err := osfake.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv, opensandbox.New(opensandbox.Options{APIURL: srv.URL(), APIKey: testKey, Poll: 20 * time.Millisecond,
		Retry: remote.Retry{Base: 10 * time.Millisecond, Max: 50 * time.Millisecond, MaxWait: 2 * time.Second}})
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// written opens a sandbox and writes note.txt in it.
func written(t *testing.T, b *opensandbox.Backend, note string) sandbox.Sandbox {
	t.Helper()
	ctx := testCtx(t)
	sb, err := b.Open(ctx, session.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.WriteFile(ctx, "note.txt", []byte(note)); err != nil {
		t.Fatal(err)
	}
	return sb
}

// reads reattaches the sandbox id and checks its note.txt.
func reads(t *testing.T, b *opensandbox.Backend, id, want string) {
	t.Helper()
	ctx := testCtx(t)
	sb, err := b.Attach(ctx, id, session.Spec{})
	if err != nil {
		t.Fatalf("reattaching %s on a fake started again: %v", id, err)
	}
	defer sb.Close()
	got, err := sb.ReadFile(ctx, "note.txt")
	if err != nil || string(got) != want {
		t.Fatalf("note.txt of %s on a fake started again: %q, %v (want %q)", id, got, err, want)
	}
}

// With Options.Dir, sandboxes — running or paused — and snapshots outlive
// the fake: a fake started again on the directory (on another port)
// serves them, their files as they were.
func TestSandboxesOutliveTheFake(t *testing.T) {
	o := osfake.Options{Dir: t.TempDir()}
	srv, b := start(t, o)
	ctx := testCtx(t)
	running := written(t, b, "running")
	paused := written(t, b, "paused")
	cl, err := running.Clone(ctx) // a snapshot, and a sandbox from it
	if err != nil {
		t.Fatal(err)
	}
	snapshot := cl.(interface{ Remote() session.Remote }).Remote().SnapshotID
	if snapshot == "" {
		t.Fatal("the clone was not made from a snapshot")
	}
	if err := b.Pause(ctx, paused.ID()); err != nil {
		t.Fatal(err)
	}
	for _, sb := range []sandbox.Sandbox{running, paused, cl} {
		_ = sb.Close()
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}

	srv, b = start(t, o)
	if n := srv.Sandboxes(); n != 3 {
		t.Fatalf("the fake started again serves %d sandboxes, want 3", n)
	}
	reads(t, b, running.ID(), "running")
	reads(t, b, cl.ID(), "running")
	reads(t, b, paused.ID(), "paused") // attach resumes it
	gone := session.Placement{Backend: opensandbox.Name, SandboxID: newID(), Remote: &session.Remote{Provider: opensandbox.Name, SnapshotID: snapshot}}
	sb, err := b.AttachPlacement(ctx, gone)
	if err != nil {
		t.Fatalf("a sandbox from a snapshot taken before the fake started again: %v", err)
	}
	reads(t, b, sb.ID(), "running")
	_ = sb.Close()
}

// A sandbox's expiry is armed again by a fake started on its directory,
// and one that passed while no fake ran ends at Start.
func TestExpiryOutlivesTheFake(t *testing.T) {
	o := osfake.Options{Dir: t.TempDir()}
	srv, b := start(t, o)
	soon, past := written(t, b, "soon"), written(t, b, "past")
	_, _ = soon.Close(), past.Close()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	// The service's shortest timeout is a minute: move the expiries in
	// the state file.
	expire(t, o.Dir, map[string]time.Time{soon.ID(): time.Now().Add(2 * time.Second), past.ID(): time.Now().Add(-time.Second)})

	srv, _ = start(t, o)
	if n := srv.Sandboxes(); n != 1 || dirExists(filepath.Join(o.Dir, past.ID())) {
		t.Fatalf("a sandbox that expired while no fake ran: %d sandboxes left (want 1), its files there: %v", n, dirExists(filepath.Join(o.Dir, past.ID())))
	}
	deadline := time.Now().Add(20 * time.Second)
	for dirExists(filepath.Join(o.Dir, soon.ID())) {
		if time.Now().After(deadline) {
			t.Fatalf("sandbox %s outlived its expiry on a fake started again", soon.ID())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := srv.Sandboxes(); n != 0 {
		t.Fatalf("%d sandboxes after both expired", n)
	}
}

// expire sets the expiries of sandboxes in the state file of dir.
func expire(t *testing.T, dir string, at map[string]time.Time) {
	t.Helper()
	path := filepath.Join(dir, "state.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var st map[string][]map[string]any
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	for _, b := range st["sandboxes"] {
		if when, ok := at[b["id"].(string)]; ok {
			b["expires"] = when.UTC()
		}
	}
	if data, err = json.Marshal(st); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A state file that cannot be read is one error from Start, and the
// directory is left as it was.
func TestCorruptStateIsAnError(t *testing.T) {
	o := osfake.Options{Dir: t.TempDir()}
	srv, b := start(t, o)
	sb := written(t, b, "kept")
	_ = sb.Close()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(o.Dir, "state.json")
	corrupt := `{"sandboxes": [{"id": "x", "status": {"state": "Exploded"}}]}`
	if err := os.WriteFile(path, []byte(corrupt), 0o644); err != nil {
		t.Fatal(err)
	}
	if srv, err := osfake.Start(o); err == nil || !strings.Contains(err.Error(), path) {
		if srv != nil {
			_ = srv.Close()
		}
		t.Fatalf("Start on a corrupt state: %v (want an error naming %s)", err, path)
	}
	if !dirExists(filepath.Join(o.Dir, sb.ID(), "home", "user")) {
		t.Fatal("Start on a corrupt state removed a sandbox's files")
	}
	if data, _ := os.ReadFile(path); string(data) != corrupt {
		t.Fatalf("Start on a corrupt state changed it: %s", data)
	}
}

// A directory a fake serves is refused to a second one until it closes.
func TestDirInUseIsRefused(t *testing.T) {
	o := osfake.Options{Dir: t.TempDir()}
	srv, err := osfake.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	if second, err := osfake.Start(o); err == nil || !strings.Contains(err.Error(), "in use") {
		if second != nil {
			_ = second.Close()
		}
		t.Fatalf("a second fake on a directory in use: %v", err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := osfake.Start(o)
	if err != nil {
		t.Fatalf("a fake on a directory its last fake closed: %v", err)
	}
	_ = again.Close()
}

// newID is a sandbox id no fake made.
func newID() string { return "00000000-0000-4000-8000-000000000000" }

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
