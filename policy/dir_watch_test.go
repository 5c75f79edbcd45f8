package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var runCommand = Action{Kind: KindTool, Tool: "run_command", Risk: RiskHigh, Tenant: "acme", Project: "web"}

// A directory that does not exist yet is no error: until it appears the
// built-in rule decides (a non-idempotent high-risk call needs approval),
// and a file written into it later takes effect without reopening.
func TestDirMissingAtStart(t *testing.T) {
	root := filepath.Join(t.TempDir(), "policies")
	d, err := OpenDir(root, ReloadEvery(time.Millisecond))
	if err != nil {
		t.Fatalf("a missing directory: %v", err)
	}
	if got := decide(t, d, runCommand); got.Effect != Approve || got.Rule != RuleBuiltin {
		t.Fatalf("no directory: run_command is %s, want approve by %s", got, RuleBuiltin)
	}
	if err := d.Check(); err != nil {
		t.Fatalf("Check of a missing directory: %v", err)
	}
	write(t, filepath.Join(root, "acme", "default.json"), denyTools)
	got := eventually(t, d, runCommand, func(d Decision) bool { return d.Rule == "no-tools" })
	if got.Effect != Deny {
		t.Fatalf("the file written later: %s", got)
	}
	// The directory removed and made again is followed too.
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	eventually(t, d, runCommand, func(d Decision) bool { return d.Rule == RuleBuiltin && d.Effect == Approve })
	write(t, filepath.Join(root, "acme", "web.json"), `{"rules": [{"name": "trusted", "when": "action.tool == 'run_command'", "effect": "allow"}]}`)
	eventually(t, d, runCommand, func(d Decision) bool { return d.Rule == "trusted" && d.Effect == Allow })

	file := filepath.Join(t.TempDir(), "file")
	write(t, file, "")
	if _, err := OpenDir(file); err == nil {
		t.Fatal("a file opened as a policy directory")
	}
}

// Without a file in force the built-in rule decides and the rest is
// allowed by no policy (RuleNone); a file's own default is RuleDefault.
func TestDirWithoutAFileDecidesNothing(t *testing.T) {
	d, err := OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []Action{{Kind: KindModel}, {Kind: KindTool, Tool: "read_file", Risk: "low"}, {Kind: KindTool, Tool: "x", Risk: RiskHigh, Idempotent: true}} {
		if got := decide(t, d, a); got.Effect != Allow || got.Rule != RuleNone {
			t.Fatalf("%+v without a file: %s", a, got)
		}
	}
	if got := decide(t, d, runCommand); got.Effect != Approve || got.Rule != RuleBuiltin {
		t.Fatalf("run_command without a file: %s", got)
	}
}

// A file broken by a rewrite keeps the rules it last loaded with (and the
// built-in rule), and says why: Policy returns them with the load error,
// which names the file and the rule. Fixed, the new rules take effect.
func TestDirKeepsTheLastGoodRules(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "acme", "web.json")
	write(t, path, `{"rules": [{"name": "no-models", "when": "action.kind == 'model'", "effect": "deny"}]}`)
	d, err := OpenDir(root, ReloadEvery(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	model := Action{Kind: KindModel, Tenant: "acme", Project: "web"}
	if got := decide(t, d, model); got.Rule != "no-models" {
		t.Fatalf("before: %s", got)
	}
	write(t, path, `{"rules": [{"name": "broken", "when": "action.tool ==", "effect": "allow"}]}`)
	deadline := time.Now().Add(10 * time.Second)
	for {
		p, err := d.Policy("acme", "web")
		if err != nil {
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), `rule "broken"`) {
				t.Fatalf("the load error: %v", err)
			}
			if p == nil || p.Name() != path {
				t.Fatalf("the last good rules are not kept: %v", p)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the broken rewrite was never seen")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := decide(t, d, model); got.Effect != Deny || got.Rule != "no-models" {
		t.Fatalf("a broken rewrite: %s, want the last good rule", got)
	}
	if got := decide(t, d, runCommand); got.Effect != Approve || got.Rule != RuleBuiltin {
		t.Fatalf("a broken rewrite: run_command is %s, want the built-in rule", got)
	}
	write(t, path, `{}`)
	eventually(t, d, model, func(d Decision) bool { return d.Effect == Allow && d.Rule == RuleDefault })
	if _, err := d.Policy("acme", "web"); err != nil {
		t.Fatalf("fixed: %v", err)
	}
}
