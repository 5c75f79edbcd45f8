package rath_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/openrath/rath"
	"github.com/openrath/rath/policy"
)

// The runtime's policy directory (Config.Policies, or $RATH_POLICIES, or
// <home>/policies) decides the actions of its runs.
func TestRuntimePolicies(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	dir := filepath.Join(home, "policies", "default")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "default.json"),
		[]byte(`{"rules": [{"name": "offline", "when": "action.kind == 'model'", "effect": "deny", "reason": "no model calls here"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	rt, err := rath.Open(ctx, rath.Config{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if rt.Policy == nil {
		t.Fatal("the home's policies directory was not opened")
	}
	out, err := rt.Run(ctx, "echo")
	if !errors.Is(err, policy.ErrDenied) || out == nil {
		t.Fatalf("run under a policy that denies model calls: %v", err)
	}
	found := false
	for _, c := range out.All() {
		if d := c.Decision; d != nil && d.Selector == "policy" && d.Choice == "deny" {
			found = true
		}
	}
	if !found {
		t.Fatal("the denial is not in the run's session")
	}
	// A decider the caller gives comes first.
	allow, err := policy.Parse("allow.json", []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Run(policy.WithDecider(ctx, allow), "echo"); err != nil {
		t.Fatalf("run under the caller's decider: %v", err)
	}
	if policy.From(rt.WithPolicy(ctx)) != rt.Policy || policy.From(rt.WithPolicy(policy.WithDecider(ctx, allow))) != allow {
		t.Fatal("WithPolicy")
	}

	// Named explicitly, the directory must exist; $RATH_POLICIES names it too.
	if _, err := rath.Open(ctx, rath.Config{Home: t.TempDir(), Policies: filepath.Join(home, "missing")}); err == nil {
		t.Fatal("a missing policy directory was accepted")
	}
	t.Setenv("RATH_POLICIES", filepath.Join(home, "policies"))
	other, err := rath.Open(ctx, rath.Config{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if other.Policy == nil {
		t.Fatal("$RATH_POLICIES was not opened")
	}
	t.Setenv("RATH_POLICIES", "")
	none, err := rath.Open(ctx, rath.Config{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer none.Close()
	if none.Policy == nil {
		t.Fatal("no policy without a policies directory: the built-in rule does not apply")
	}
}
