package policy

import (
	"context"
	"path/filepath"
	"testing"
)

// benchPolicy is a policy of a realistic size: a few rules over commands,
// paths, hosts and models, none of which holds for the action decided, so
// every condition is evaluated.
const benchPolicy = `{"rules": [
	{"name": "no-rm", "when": "action.kind == 'exec' && action.command.contains('rm -rf')", "effect": "deny"},
	{"name": "etc", "when": "action.kind == 'tool' && has(action.args.path) && action.args.path.startsWith('/etc')", "effect": "deny"},
	{"name": "egress", "when": "action.kind == 'egress' && !(action.host in ['api.example.com', 'pypi.org'])", "effect": "deny"},
	{"name": "models", "when": "action.kind == 'model' && action.model.startsWith('o1')", "effect": "approve"},
	{"name": "prod", "when": "action.project == 'prod' && !action.idempotent", "effect": "approve"},
	{"name": "slow", "when": "action.tool == 'run_tests'", "effect": "constrain", "constraints": {"timeout": "10m"}}
]}`

var benchAction = Action{Kind: KindTool, Tool: "write_file", Args: map[string]any{"path": "src/main.go", "content": "package main"},
	Risk: "medium", Idempotent: true, Tenant: "acme", Project: "web", Agent: "coder", Placement: "docker"}

// BenchmarkDecide is one decision of a compiled policy (every rule
// evaluated, the default deciding).
func BenchmarkDecide(b *testing.B) {
	p := mustParse(b, benchPolicy)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if d, _ := p.Decide(ctx, benchAction); d.Rule != RuleDefault {
			b.Fatal(d)
		}
	}
}

// BenchmarkDirDecide is the same decision through a Dir: the project's
// cached policy, looked up by tenant and project.
func BenchmarkDirDecide(b *testing.B) {
	root := b.TempDir()
	if err := writeFile(filepath.Join(root, "acme", "web.json"), benchPolicy); err != nil {
		b.Fatal(err)
	}
	d, err := OpenDir(root)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if got, _ := d.Decide(ctx, benchAction); got.Rule != RuleDefault {
			b.Fatal(got)
		}
	}
}

// BenchmarkCompile is loading a policy file: decoding and compiling its
// rules (done once per change of the file).
func BenchmarkCompile(b *testing.B) {
	data := []byte(benchPolicy)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("bench.json", data); err != nil {
			b.Fatal(err)
		}
	}
}
