package policy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func write(t *testing.T, path, src string) {
	t.Helper()
	if err := writeFile(path, src); err != nil {
		t.Fatal(err)
	}
}

func writeFile(path, src string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(src), 0o644)
}

// eventually polls decide until ok holds, failing after a deadline.
func eventually(t *testing.T, d *Dir, a Action, ok func(Decision) bool) Decision {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := decide(t, d, a)
		if ok(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%+v: still %s", a, got)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

const denyTools = `{"rules": [{"name": "no-tools", "when": "action.kind == 'tool'", "effect": "deny", "reason": "no tools here"}]}`

func TestDirFindsTheProjectsFile(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "acme", "web.json"), denyTools)
	write(t, filepath.Join(root, "acme", "default.json"), `{"default": "deny"}`)
	d, err := OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	tool := Action{Kind: KindTool, Tool: "x", Tenant: "acme", Project: "web"}
	if got := decide(t, d, tool); got.Effect != Deny || got.Rule != "no-tools" {
		t.Fatalf("the project's file: %s", got)
	}
	model := Action{Kind: KindModel, Tenant: "acme", Project: "web"}
	if got := decide(t, d, model); got.Effect != Allow {
		t.Fatalf("the project's file's default: %s", got)
	}
	model.Project = "api"
	if got := decide(t, d, model); got.Effect != Deny || got.Rule != RuleDefault {
		t.Fatalf("the tenant's default.json: %s", got)
	}
	model.Tenant = "other"
	if got := decide(t, d, model); got.Effect != Allow || got.Rule != RuleNone {
		t.Fatalf("no file: %s", got)
	}
	risky := Action{Kind: KindTool, Tool: "run_command", Risk: RiskHigh}
	if got := decide(t, d, risky); got.Effect != Approve || got.Rule != RuleBuiltin {
		t.Fatalf("no file (default tenant and project): the built-in rule: %s", got)
	}
	for _, bad := range []Action{{Kind: KindModel, Tenant: "../acme", Project: "web"}, {Kind: KindModel, Tenant: "acme", Project: ".."}} {
		if got := decide(t, d, bad); got.Effect != Deny || got.Rule != RuleLoad {
			t.Fatalf("%+v: %s", bad, got)
		}
	}
	if p, err := d.Policy("acme", "web"); err != nil || p.Name() != filepath.Join(root, "acme", "web.json") {
		t.Fatalf("Policy: %v, %v", p.Name(), err)
	}
	if err := d.Check(); err != nil {
		t.Fatal(err)
	}
}

// A file that fails to load when first seen denies every action of its
// projects, with the error (naming the file and the rule) as the reason,
// until it is fixed — at start, and when it is written anew after it was
// removed (no good rules of it to keep).
func TestDirFailsClosed(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "acme", "web.json")
	write(t, path, `{"rules": [{"name": "broken", "when": "action.tool ==", "effect": "allow"}]}`)
	d, err := OpenDir(root, ReloadEvery(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Check(); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), `rule "broken"`) {
		t.Fatalf("Check: %v", err)
	}
	model := Action{Kind: KindModel, Tenant: "acme", Project: "web"}
	got := decide(t, d, model)
	if got.Effect != Deny || got.Rule != RuleLoad || !strings.Contains(got.Reason, filepath.Join("acme", "web.json")) || !strings.Contains(got.Reason, `rule "broken"`) {
		t.Fatalf("a broken file: %s", got)
	}
	write(t, path, denyTools)
	eventually(t, d, model, func(d Decision) bool { return d.Effect == Allow })
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	eventually(t, d, model, func(d Decision) bool { return d.Rule == RuleNone })
	write(t, path, `{"rules": [{"name": "broken again", "when": "action.nope", "effect": "allow"}], "default": "allow"}`)
	got = eventually(t, d, model, func(d Decision) bool { return d.Effect == Deny })
	if got.Rule != RuleLoad || !strings.Contains(got.Reason, `rule "broken again"`) {
		t.Fatalf("written anew, broken: %s", got)
	}
}

// Rewriting a file changes the decisions that follow; removing it leaves
// the tenant's default, then none.
func TestDirHotReload(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "acme", "web.json")
	write(t, path, denyTools)
	d, err := OpenDir(root, ReloadEvery(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	tool := Action{Kind: KindTool, Tool: "x", Tenant: "acme", Project: "web"}
	if got := decide(t, d, tool); got.Effect != Deny {
		t.Fatalf("before: %s", got)
	}
	write(t, path, `{"rules": [{"name": "tools-ok", "when": "action.kind == 'tool'", "effect": "constrain", "constraints": {"timeout": "5s"}}]}`)
	got := eventually(t, d, tool, func(d Decision) bool { return d.Rule == "tools-ok" })
	if got.Effect != Constrain || got.Constraints.Timeout != 5*time.Second {
		t.Fatalf("after: %s", got)
	}
	write(t, filepath.Join(root, "acme", "default.json"), `{"default": "deny"}`)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	eventually(t, d, tool, func(d Decision) bool { return d.Effect == Deny && d.Rule == RuleDefault })
	if err := os.Remove(filepath.Join(root, "acme", "default.json")); err != nil {
		t.Fatal(err)
	}
	eventually(t, d, tool, func(d Decision) bool { return d.Effect == Allow && d.Rule == RuleNone })
}

// Without the interval passing, a decision does not look at the file.
func TestDirReloadsAtMostEveryInterval(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "default", "default.json")
	write(t, path, denyTools)
	d, err := OpenDir(root, ReloadEvery(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	tool := Action{Kind: KindTool}
	decide(t, d, tool)
	write(t, path, `{}`)
	if got := decide(t, d, tool); got.Rule != "no-tools" {
		t.Fatalf("reloaded within the interval: %s", got)
	}
}

func TestDirConcurrentDecisions(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "acme", "web.json")
	write(t, path, denyTools)
	d, err := OpenDir(root, ReloadEvery(0))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	for range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 200 {
				got, err := d.Decide(context.Background(), Action{Kind: KindTool, Tenant: "acme", Project: "web"})
				if err != nil || got.Effect != Deny && got.Effect != Allow {
					t.Errorf("%s, %v", got, err)
					return
				}
			}
		}()
	}
	for i := range 20 {
		if i%2 == 0 {
			write(t, path, `{}`)
		} else {
			write(t, path, denyTools)
		}
	}
	for range 4 {
		<-done
	}
}
