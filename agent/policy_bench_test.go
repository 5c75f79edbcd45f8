package agent

import (
	"slices"
	"testing"
	"time"

	"github.com/openrath/rath/policy"
)

// BenchmarkStepOverheadPolicy is BenchmarkStepOverheadMemory (len=10) with
// a policy of six rules deciding every step's model call and tool call,
// each decision a chunk: the figure less that one's is what governance
// costs a step.
func BenchmarkStepOverheadPolicy(b *testing.B) {
	p, err := policy.Parse("bench.json", []byte(`{"rules": [
		{"name": "no-rm", "when": "action.kind == 'exec' && action.command.contains('rm -rf')", "effect": "deny"},
		{"name": "etc", "when": "action.kind == 'tool' && has(action.args.path) && action.args.path.startsWith('/etc')", "effect": "deny"},
		{"name": "egress", "when": "action.kind == 'egress' && !(action.host in ['api.example.com', 'pypi.org'])", "effect": "deny"},
		{"name": "models", "when": "action.kind == 'model' && action.model.startsWith('o1')", "effect": "approve"},
		{"name": "prod", "when": "action.project == 'prod' && !action.idempotent", "effect": "approve"},
		{"name": "slow", "when": "action.tool == 'run_tests'", "effect": "constrain", "constraints": {"timeout": "10m"}}]}`))
	if err != nil {
		b.Fatal(err)
	}
	in := prefilled(b, 10)
	a := stepAgent(b, 20, Config{Decider: p})
	var per []time.Duration
	for b.Loop() {
		per = append(per, stepTimes(b, a, in)...)
	}
	slices.Sort(per)
	b.ReportMetric(float64(per[len(per)/2].Nanoseconds())/1e3, "us/step")
}
