package main

import (
	"context"

	"github.com/openrath/rath/policy"
)

// demoRule names the decisions in which rath demo gives the approval the
// built-in rule asks for.
const demoRule = "demo"

// demoPolicy is the runtime's policy for the demo's run, except that the
// approval the built-in rule asks for a call of the demo's own tools (its
// tests, run with run_command in the sandbox) is given: whoever ran
// `rath demo` asked for them. Every other decision — a policy file's rule
// that holds first included — is the runtime's.
type demoPolicy struct{ policy.Decider }

func (p demoPolicy) Decide(ctx context.Context, a policy.Action) (policy.Decision, error) {
	d, err := p.Decider.Decide(ctx, a)
	if err != nil || d.Effect != policy.Approve || d.Rule != policy.RuleBuiltin || a.Kind != policy.KindTool || a.Tool != "run_command" {
		return d, err
	}
	return policy.Decision{Effect: policy.Allow, Rule: demoRule,
		Reason: "the policy asks for approval (rule " + d.Rule + ": " + d.Reason + "); running `rath demo` gives it for the demo's tests"}, nil
}
