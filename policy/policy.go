package policy

import (
	"context"
	"fmt"

	"github.com/google/cel-go/cel"
)

// Decider decides actions. Its error is for a decision it could not make
// at all; the caller denies the action then (policies fail closed). A
// condition that fails to evaluate is no error: it is a deny decision
// naming the rule.
type Decider interface {
	Decide(ctx context.Context, a Action) (Decision, error)
}

// Policy is a compiled policy file; it is safe for concurrent use. The
// nil *Policy has no rules: the built-in rule, then allow (RuleNone).
type Policy struct {
	name  string
	rules []rule
	def   Effect
}

type rule struct {
	Rule
	prg cel.Program
	// decided is the decision the rule makes when its condition holds.
	decided Decision
}

// Compile compiles the conditions of a decoded file (an error wrapping
// ErrInvalid names the rule whose condition does not compile).
func Compile(f *File) (*Policy, error) {
	p, err := compileFile(f)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return p, nil
}

func compileFile(f *File) (*Policy, error) {
	p := &Policy{def: f.Default, rules: make([]rule, 0, len(f.Rules))}
	if p.def == "" {
		p.def = Allow
	}
	for _, r := range f.Rules {
		prg, err := compile(r.When)
		if err != nil {
			return nil, fmt.Errorf("rule %q: when: %v", r.Name, err)
		}
		d := Decision{Effect: r.Effect, Rule: r.Name, Reason: r.Reason}
		if d.Reason == "" {
			d.Reason = "when " + r.When
		}
		if r.Constraints != nil {
			d.Constraints = *r.Constraints
		}
		p.rules = append(p.rules, rule{Rule: r, prg: prg, decided: d})
	}
	return p, nil
}

// Name is the path the policy was loaded from ("" if none).
func (p *Policy) Name() string {
	if p == nil {
		return ""
	}
	return p.name
}

// Decide decides a: the first rule whose condition holds; else the
// built-in rule (a call to a tool that is not idempotent and whose risk is
// high needs approval); else the default (RuleDefault; for the nil
// Policy, allow by RuleNone). A condition that fails to
// evaluate (an error, a value that is not a bool, a cost over the bound)
// denies, naming the rule. The error is always nil.
func (p *Policy) Decide(_ context.Context, a Action) (Decision, error) {
	if !knownKind(a.Kind) {
		return Denied(RuleError, fmt.Sprintf("unknown action kind %q", a.Kind)), nil
	}
	a = a.normalized()
	if p != nil {
		in := vars{action: &a}
		for i := range p.rules {
			r := &p.rules[i]
			out, _, err := r.prg.Eval(in)
			if err != nil {
				return Denied(r.Name, fmt.Sprintf("the rule's condition failed to evaluate, so the action is denied: %v", err)), nil
			}
			holds, ok := out.Value().(bool)
			if !ok {
				return Denied(r.Name, fmt.Sprintf("the rule's condition gave %s, not a bool, so the action is denied", out.Type().TypeName())), nil
			}
			if holds {
				return r.decided, nil
			}
		}
	}
	if a.Kind == KindTool && !a.Idempotent && a.Risk == RiskHigh {
		return Decision{Effect: Approve, Rule: RuleBuiltin, Reason: "the tool is not idempotent and its risk is high"}, nil
	}
	if p == nil {
		return Decision{Effect: Allow, Rule: RuleNone, Reason: "no policy applies"}, nil
	}
	return Decision{Effect: p.def, Rule: RuleDefault, Reason: "no rule decided"}, nil
}
