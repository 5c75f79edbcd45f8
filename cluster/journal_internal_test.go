package cluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/openrath/rath"
	"github.com/openrath/rath/sandbox"
	_ "github.com/openrath/rath/sandbox/local"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// journalOf builds a journal session of the given entries.
func journalOf(t testing.TB, es ...journalEntry) *session.Session {
	s := session.New().Append(session.Note("workspace journal of a test"))
	for _, e := range es {
		n, err := e.note()
		if err != nil {
			t.Fatal(err)
		}
		s = s.Append(n)
	}
	return s
}

// treeOf is the tree hash of a directory holding files.
func treeOf(t *testing.T, files map[string]string) string {
	dir := t.TempDir()
	for p, data := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, err := sandbox.OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.CloseWorkspace()
	h, err := w.TreeHash(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// A journal rebuilds its workspace up to its last committed step; one
// that cannot (it outgrew the journal, it is not what it says, it is not
// a journal) is refused with ErrCannotMove.
func TestRebuild(t *testing.T) {
	t.Setenv("RATH_HOME", t.TempDir())
	ctx := context.Background()
	spec := &session.Spec{}
	base := journalEntry{Kind: "base", Backend: "local", Spec: spec, Files: []journalFile{{Path: "a.txt", Mode: 0o644, Data: []byte("a\n")}},
		Tree: treeOf(t, map[string]string{"a.txt": "a\n"})}
	step1 := journalEntry{Kind: "step", Calls: []string{"c1"}, Files: []journalFile{{Path: "d/b.txt", Mode: 0o644, Data: []byte("b\n")}},
		Tree: treeOf(t, map[string]string{"a.txt": "a\n", "d/b.txt": "b\n"})}
	step2 := journalEntry{Kind: "step", Calls: []string{"c2"}, Deleted: []string{"a.txt"},
		Tree: treeOf(t, map[string]string{"d/b.txt": "b\n"})}
	id := "sbx_0123456789abcdef"
	dir := filepath.Join(sandbox.WorkspacesDir(), id)

	// c2's results were never committed: the workspace is as after c1.
	if err := rebuild(ctx, id, journalOf(t, base, step1, step2), map[string]bool{"c1": true}); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"a.txt": "a\n", "d/b.txt": "b\n"} {
		if got, err := os.ReadFile(filepath.Join(dir, p)); err != nil || string(got) != want {
			t.Fatalf("%s = %q, %v; want %q", p, got, err, want)
		}
	}
	// Both committed: a.txt is gone.
	if err := rebuild(ctx, id, journalOf(t, base, step1, step2), map[string]bool{"c1": true, "c2": true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); !os.IsNotExist(err) {
		t.Fatalf("a.txt after its deletion: %v", err)
	}

	tampered := step1
	tampered.Files = []journalFile{{Path: "d/b.txt", Mode: 0o644, Data: []byte("not b\n")}}
	broken := journalEntry{Kind: "broken", Why: "a step wrote 40 MB"}
	docker := base
	docker.Backend = "docker"
	own := base
	own.Spec = &session.Spec{Dir: t.TempDir()}
	for name, js := range map[string]*session.Session{
		"tampered":  journalOf(t, base, tampered),
		"broken":    journalOf(t, base, step1, broken),
		"docker":    journalOf(t, docker),
		"own dir":   journalOf(t, own),
		"no base":   journalOf(t, step1),
		"not notes": session.New().Append(session.Note("title")).Append(session.User("hello")),
	} {
		if err := rebuild(ctx, id, js, map[string]bool{"c1": true}); !errors.Is(err, ErrCannotMove) {
			t.Errorf("%s: %v, want ErrCannotMove", name, err)
		}
	}
	escape := base
	escape.Files = []journalFile{{Path: "../outside.txt", Mode: 0o644, Data: []byte("x")}}
	if err := rebuild(ctx, id, journalOf(t, escape), nil); err == nil {
		t.Fatal("a journal writing outside its workspace was applied")
	}
	if _, err := os.Stat(filepath.Join(sandbox.WorkspacesDir(), "outside.txt")); !os.IsNotExist(err) {
		t.Fatalf("a file was written outside the workspace: %v", err)
	}
}

// Journal entries are decoded from the store: any note text gives entries
// or an error, and applying them never writes outside the workspace.
func FuzzJournal(f *testing.F) {
	f.Add(`{"kind":"base","backend":"local","spec":{},"files":[{"path":"a","mode":420,"data":"YQ=="}],"tree":"x"}`)
	f.Add(`{"kind":"step","calls":["c"],"deleted":["../../etc"]}`)
	f.Add(`{"kind":"base","files":[{"path":"l","mode":134218221,"link":"/etc/passwd"}]}`)
	f.Fuzz(func(t *testing.T, raw string) {
		home := t.TempDir()
		t.Setenv("RATH_HOME", filepath.Join(home, "h"))
		js := session.New().Append(session.Note("title")).Append(session.Note(journalPrefix + raw))
		es, err := entries(js)
		if err != nil {
			return
		}
		_ = es
		_ = rebuild(context.Background(), "sbx_0123456789abcdef", js, map[string]bool{})
		// Nothing lands beside the home.
		ents, err := os.ReadDir(home)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if e.Name() != "h" {
				t.Fatalf("written outside the home: %s", e.Name())
			}
		}
	})
}

// What an agent reports of a local workspace — its start, then each
// step's changes — rebuilds it on another host, modes and symlinks
// included; a workspace that is a directory of its host is not journaled.
func TestJournalRoundTrip(t *testing.T) {
	t.Setenv("RATH_HOME", t.TempDir())
	ctx := context.Background()
	home := t.TempDir()
	rt, err := rath.Open(ctx, rath.Config{Home: home, Store: "sqlite://" + filepath.Join(home, "rath.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	c, err := Open(ctx, rt, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	run := session.FromUser("a run")
	if err := rt.Store.Commit(ctx, run, ""); err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.Open(ctx, "local", session.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	dir := sb.WorkspaceDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "keep.txt"), []byte("kept\n"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "gone.txt"), []byte("to delete\n"), 0o644))
	placed := run.To("local", session.Spec{})
	j := c.newJournal(run.ID())
	must(j.Opened(ctx, placed, sb))
	must(j.Opened(ctx, placed, sb)) // a resumed run opens it again: nothing new
	must(os.MkdirAll(filepath.Join(dir, "bin"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "bin", "run.sh"), []byte("#!/bin/sh\necho hi\n"), 0o755))
	must(os.Symlink("bin/run.sh", filepath.Join(dir, "run")))
	must(os.Remove(filepath.Join(dir, "gone.txt")))
	must(j.Changed(ctx, placed, sb, []string{"c1"}, []session.FileEffect{
		{Path: "bin/run.sh", Op: session.EffectAdded}, {Path: "run", Op: session.EffectAdded}, {Path: "gone.txt", Op: session.EffectDeleted}}))
	want, err := sb.TreeHash(ctx)
	must(err)

	infos, err := rt.Store.List(ctx, store.Filter{Labels: map[string]string{LabelKind: "journal", LabelJournalOf: string(run.ID())}})
	must(err)
	if len(infos) != 1 {
		t.Fatalf("%d journals, want 1", len(infos))
	}
	js, err := rt.Store.Load(ctx, infos[0].ID)
	must(err)
	t.Setenv("RATH_HOME", t.TempDir()) // another host
	must(rebuild(ctx, sb.ID(), js, map[string]bool{"c1": true}))
	w, err := sandbox.OpenWorkspace(filepath.Join(sandbox.WorkspacesDir(), sb.ID()))
	must(err)
	defer w.CloseWorkspace()
	got, err := w.TreeHash(ctx)
	must(err)
	if got != want {
		t.Fatalf("rebuilt tree %s, want %s", got, want)
	}

	own, err := sandbox.Open(ctx, "local", session.Spec{Dir: t.TempDir()})
	must(err)
	defer own.Close()
	j2 := c.newJournal(run.ID())
	must(j2.Opened(ctx, run.To("local", session.Spec{Dir: own.WorkspaceDir()}), own))
	js2, err := j2.find(ctx, own.ID())
	must(err)
	if err := rebuild(ctx, own.ID(), js2, nil); !errors.Is(err, ErrCannotMove) {
		t.Fatalf("rebuilding a host's own directory: %v, want ErrCannotMove", err)
	}
}

// A run placed on a docker sandbox does not move: its container lives on
// its host.
func TestDockerRunsDoNotMove(t *testing.T) {
	c := &Cluster{}
	if _, err := c.restoreWorkspaces(context.Background(), &Run{ID: "ses_x", Placed: "docker"}); !errors.Is(err, ErrCannotMove) {
		t.Fatalf("moving a docker run: %v, want ErrCannotMove", err)
	}
}
