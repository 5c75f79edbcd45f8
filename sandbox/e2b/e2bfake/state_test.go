package e2bfake_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/e2b"
	"github.com/openrath/rath/sandbox/e2b/e2bfake"
	"github.com/openrath/rath/sandbox/remote"
	"github.com/openrath/rath/session"
)

const testKey = "e2bfake_test_key_not_a_secret"

// start starts a fake on dir and a backend that reaches it, with
// lifetime for the sandboxes it creates.
func start(t *testing.T, fo e2bfake.Options, lifetime time.Duration) (*e2bfake.Server, *e2b.Backend) {
	t.Helper()
	fo.APIKey = testKey
	srv, err := e2bfake.Start(fo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	provider := e2b.E2B
	if fo.Cube {
		provider = e2b.Cube
	}
	return srv, e2b.New(e2b.Options{Provider: provider, APIURL: srv.URL(), APIKey: testKey, Domain: srv.Domain(),
		Transport: srv.Transport(true), Lifetime: lifetime, RenewEvery: time.Hour,
		Retry: remote.Retry{Base: 10 * time.Millisecond, Max: 50 * time.Millisecond, MaxWait: 2 * time.Second}})
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// written opens a sandbox, writes note.txt in it and closes the handle
// (the sandbox lives on).
func written(t *testing.T, b *e2b.Backend, note string) sandbox.Sandbox {
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
func reads(t *testing.T, b *e2b.Backend, id, want string) {
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
// the fake: a fake started again on the directory serves them, their
// files as they were, and a running sandbox's lifetime still ends.
func TestSandboxesOutliveTheFake(t *testing.T) {
	for _, c := range []struct {
		name string
		fo   e2bfake.Options
	}{{"e2b", e2bfake.Options{NoFork: true}}, {"cube", e2bfake.Options{Cube: true, Domain: "cube.test"}}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.fo.Dir = t.TempDir()
			srv, b := start(t, c.fo, time.Hour)
			ctx := testCtx(t)
			running := written(t, b, "running")
			paused := written(t, b, "paused")
			var snapshot string
			if !c.fo.Cube {
				cl, err := running.Clone(ctx) // no fork: a snapshot, and a sandbox from it
				if err != nil {
					t.Fatal(err)
				}
				snapshot = cl.(interface{ Remote() session.Remote }).Remote().SnapshotID
				if snapshot == "" {
					t.Fatal("the clone was not made from a snapshot")
				}
				_ = cl.Close()
			}
			if err := b.Pause(ctx, paused.ID()); err != nil {
				t.Fatal(err)
			}
			o := b.Options()
			o.Lifetime = 5 * time.Second
			ending := written(t, e2b.New(o), "ending")
			for _, sb := range []sandbox.Sandbox{running, paused, ending} {
				_ = sb.Close()
			}
			if err := srv.Close(); err != nil {
				t.Fatal(err)
			}

			srv, b = start(t, c.fo, time.Hour)
			want := 3
			if !c.fo.Cube {
				want = 4 // the clone
			}
			if n := srv.Sandboxes(); n != want {
				t.Fatalf("the fake started again serves %d sandboxes, want %d", n, want)
			}
			reads(t, b, running.ID(), "running")
			reads(t, b, paused.ID(), "paused") // connect resumes it
			if snapshot != "" {
				gone := session.Placement{Backend: e2b.E2B, SandboxID: "igone", Remote: &session.Remote{Provider: e2b.E2B, Template: "base", SnapshotID: snapshot}}
				sb, err := b.AttachPlacement(ctx, gone)
				if err != nil {
					t.Fatalf("a sandbox from a snapshot taken before the fake started again: %v", err)
				}
				reads(t, b, sb.ID(), "running")
				_ = sb.Close()
			}
			// The short sandbox's lifetime ends without a request.
			deadline := time.Now().Add(20 * time.Second)
			for dirExists(filepath.Join(c.fo.Dir, ending.ID())) {
				if time.Now().After(deadline) {
					t.Fatalf("sandbox %s outlived its lifetime on a fake started again", ending.ID())
				}
				time.Sleep(100 * time.Millisecond)
			}
			if _, err := b.Attach(ctx, ending.ID(), session.Spec{}); !errors.Is(err, sandbox.ErrNotFound) {
				t.Fatalf("reattaching an expired sandbox: %v", err)
			}
		})
	}
}

// A sandbox whose lifetime ended while no fake served it is expired when
// one starts again.
func TestSandboxExpiresWhileNoFakeRuns(t *testing.T) {
	fo := e2bfake.Options{Dir: t.TempDir()}
	srv, b := start(t, fo, time.Hour)
	o := b.Options()
	o.Lifetime = time.Second
	sb := written(t, e2b.New(o), "brief")
	_ = sb.Close()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	srv, b = start(t, fo, time.Hour)
	if n := srv.Sandboxes(); n != 0 || dirExists(filepath.Join(fo.Dir, sb.ID())) {
		t.Fatalf("a sandbox whose lifetime ended before the fake started: %d sandboxes, files there: %v", n, dirExists(filepath.Join(fo.Dir, sb.ID())))
	}
	if _, err := b.Attach(testCtx(t), sb.ID(), session.Spec{}); !errors.Is(err, sandbox.ErrNotFound) {
		t.Fatalf("reattaching it: %v", err)
	}
	state, err := os.ReadFile(filepath.Join(fo.Dir, "state.json"))
	if err != nil || strings.Contains(string(state), sb.ID()) {
		t.Fatalf("the state still has the expired sandbox: %s, %v", state, err)
	}
}

// A state file that cannot be read is one error from Start, and the
// directory is left as it was.
func TestCorruptStateIsAnError(t *testing.T) {
	fo := e2bfake.Options{Dir: t.TempDir()}
	srv, b := start(t, fo, time.Hour)
	sb := written(t, b, "kept")
	_ = sb.Close()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(fo.Dir, "state.json")
	if err := os.WriteFile(path, []byte(`{"sandboxes": [{"id": "../x"`), 0o644); err != nil {
		t.Fatal(err)
	}
	if srv, err := e2bfake.Start(fo); err == nil || !strings.Contains(err.Error(), path) {
		if srv != nil {
			_ = srv.Close()
		}
		t.Fatalf("Start on a corrupt state: %v (want an error naming %s)", err, path)
	}
	if !dirExists(filepath.Join(fo.Dir, sb.ID(), "home", "user")) {
		t.Fatal("Start on a corrupt state removed a sandbox's files")
	}
	if data, _ := os.ReadFile(path); string(data) != `{"sandboxes": [{"id": "../x"` {
		t.Fatalf("Start on a corrupt state changed it: %s", data)
	}
}

// A directory a fake serves is refused to a second one until it closes.
func TestDirInUseIsRefused(t *testing.T) {
	fo := e2bfake.Options{Dir: t.TempDir()}
	srv, err := e2bfake.Start(fo)
	if err != nil {
		t.Fatal(err)
	}
	if second, err := e2bfake.Start(fo); err == nil || !strings.Contains(err.Error(), "in use") {
		if second != nil {
			_ = second.Close()
		}
		t.Fatalf("a second fake on a directory in use: %v", err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := e2bfake.Start(fo)
	if err != nil {
		t.Fatalf("a fake on a directory its last fake closed: %v", err)
	}
	_ = again.Close()
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
