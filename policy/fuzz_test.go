package policy

import (
	"context"
	"errors"
	"testing"
)

// FuzzParse: any input either parses into a policy that decides every
// kind of action with a valid effect, or fails with ErrInvalid.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		`{}`,
		`{"rules": [], "default": "deny"}`,
		denyTools,
		`{"rules": [{"name": "rm", "when": "action.command.contains('rm -rf')", "effect": "deny"}]}`,
		`{"rules": [{"name": "c", "when": "action.args.n > 3", "effect": "constrain", "constraints": {"timeout": "3s", "max_output_bytes": 10, "allowed_hosts": ["*.x.org"], "read_only": true, "workspace_root": "src"}}]}`,
		`{"rules": [{"name": "a", "when": "has(action.args.p) && action.args.p.startsWith('/')", "effect": "approve", "reason": "r"}]}`,
		`{"rules": [{"name": "bad", "when": "action.", "effect": "deny"}]}`,
		`[1, 2]`,
		`{"rules": null}`,
	} {
		f.Add([]byte(seed))
	}
	actions := []Action{
		{Kind: KindTool, Tool: "run_command", Risk: RiskHigh, Args: map[string]any{"n": 4.0, "p": "/etc"}},
		{Kind: KindExec, Command: "rm -rf /"},
		{Kind: KindEgress, Host: "a.x.org"},
		{Kind: KindModel, Model: "m"},
		{Kind: KindMemoryRead, Scopes: []string{"a", "b"}},
		{Kind: KindMemoryWrite, Scope: "a"},
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("fuzz.json", data)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("an error that is not ErrInvalid: %v", err)
			}
			return
		}
		for _, a := range actions {
			d, err := p.Decide(context.Background(), a)
			if err != nil || !d.Effect.Valid() || d.Rule == "" {
				t.Fatalf("%+v: %+v, %v", a, d, err)
			}
			if d.Effect == Constrain && d.Constraints.IsZero() {
				t.Fatalf("constrain without constraints: %+v", d)
			}
		}
	})
}
