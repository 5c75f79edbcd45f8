package sandboxtest

import (
	"errors"
	"strings"
	"testing"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
)

func testClone(t *testing.T, open Open) {
	sb := fresh(t, open, session.Spec{})
	if err := sb.WriteFile(ctx(t), "shared.txt", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	before, err := sb.TreeHash(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	cl, err := sb.Clone(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	// Host backends' workspaces share this host's file system, so a clone's
	// must be another directory; a remote sandbox's workspace is a path in
	// its own machine, the same in every sandbox of a template.
	_, remote := sb.(interface{ Remote() session.Remote })
	if cl.ID() == sb.ID() || (!remote && cl.WorkspaceDir() == sb.WorkspaceDir()) || cl.Backend() != sb.Backend() {
		t.Fatalf("clone %s at %s of %s at %s", cl.ID(), cl.WorkspaceDir(), sb.ID(), sb.WorkspaceDir())
	}
	if h, _ := cl.TreeHash(ctx(t)); h != before {
		t.Fatalf("the clone's tree hash %s differs from the source's %s", h, before)
	}
	sh(t, cl, "echo clone > only-clone.txt; echo v2-clone > shared.txt")
	sh(t, sb, "echo orig > only-orig.txt")
	if _, err := sb.ReadFile(ctx(t), "only-clone.txt"); !errors.Is(err, sandbox.ErrNotFound) {
		t.Fatalf("the original sees the clone's file: %v", err)
	}
	if _, err := cl.ReadFile(ctx(t), "only-orig.txt"); !errors.Is(err, sandbox.ErrNotFound) {
		t.Fatalf("the clone sees the original's file: %v", err)
	}
	if b, _ := sb.ReadFile(ctx(t), "shared.txt"); string(b) != "v1" {
		t.Fatalf("the clone's write changed the original: %q", b)
	}
	if r := sh(t, cl, "cat shared.txt"); strings.TrimSpace(string(r.Stdout)) != "v2-clone" {
		t.Fatalf("the clone's command sees %q", r.Stdout)
	}
}

func testEffects(t *testing.T, open Open) {
	sb := fresh(t, open, session.Spec{})
	for f, c := range map[string]string{"keep.txt": "same\n", "edit.go": "package a\n\nfunc A() int { return 1 }\n", "gone.txt": "bye\n", "blob.bin": "\x00\x01\x02"} {
		if err := sb.WriteFile(ctx(t), f, []byte(c)); err != nil {
			t.Fatal(err)
		}
	}
	m, err := sb.Mark(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	sh(t, sb, `sed -i 's/return 1/return 2/' edit.go && rm gone.txt && mkdir -p new && echo hello > new/file.txt && printf '\000\003' > blob.bin`)
	eff, err := sb.Effects(ctx(t), m)
	if err != nil {
		t.Fatal(err)
	}
	if len(eff.Added) != 1 || eff.Added[0].Path != "new/file.txt" || !strings.Contains(eff.Added[0].Diff, "+hello") {
		t.Fatalf("added = %+v", eff.Added)
	}
	if len(eff.Deleted) != 1 || eff.Deleted[0].Path != "gone.txt" || eff.Deleted[0].Before == "" {
		t.Fatalf("deleted = %+v", eff.Deleted)
	}
	if len(eff.Modified) != 2 {
		t.Fatalf("modified = %+v", eff.Modified)
	}
	bin, edit := eff.Modified[0], eff.Modified[1]
	if bin.Path != "blob.bin" || !bin.Binary || bin.Diff != "" || bin.Before == bin.After {
		t.Fatalf("binary change = %+v", bin)
	}
	if edit.Path != "edit.go" || !strings.Contains(edit.Diff, "-func A() int { return 1 }") ||
		!strings.Contains(edit.Diff, "+func A() int { return 2 }") || !strings.Contains(edit.Diff, "@@") {
		t.Fatalf("text change = %+v", edit)
	}
	again, err := sb.Effects(ctx(t), m)
	if err != nil || len(again.Modified) != 2 {
		t.Fatalf("effects are not stable: %+v, %v", again, err)
	}
	m2, _ := sb.Mark(ctx(t))
	if e, _ := sb.Effects(ctx(t), m2); !e.Empty() {
		t.Fatalf("no change since the mark, yet %+v", e)
	}
}
