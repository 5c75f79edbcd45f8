package policy

import "fmt"

// Effect is what a decision does with an action.
type Effect string

// The effects, from the most permissive to the strictest.
const (
	// Allow lets the action happen.
	Allow Effect = "allow"
	// Constrain lets it happen within the decision's Constraints.
	Constrain Effect = "constrain"
	// Approve holds it until a person approves it (a tool call pauses the
	// run on the approval gate; other kinds cannot wait, and are denied).
	Approve Effect = "approve"
	// Deny stops it.
	Deny Effect = "deny"
)

// Effects lists the effects in the order of Strictness.
var Effects = []Effect{Allow, Constrain, Approve, Deny}

// Valid reports whether e is one of the effects.
func (e Effect) Valid() bool { return e.Strictness() >= 0 }

// Strictness orders the effects: allow 0, constrain 1, approve 2, deny 3
// (-1 for anything else).
func (e Effect) Strictness() int {
	switch e {
	case Allow:
		return 0
	case Constrain:
		return 1
	case Approve:
		return 2
	case Deny:
		return 3
	}
	return -1
}

// Names of the rules that decide when none of a file's rules does.
const (
	// RuleBuiltin asks for approval of a call to a tool that is not
	// idempotent and whose risk is high.
	RuleBuiltin = "builtin:high-risk"
	// RuleDefault is the file's default effect (allow if it has none, or
	// there is no file).
	RuleDefault = "default"
	// RuleNone allows an action no policy decides: no file applies to its
	// tenant and project (or the Policy is nil) and the built-in rule does
	// not hold. Such a decision is made by no one; the agent records none.
	RuleNone = "none"
	// RuleLoad denies the actions of a project whose policy file fails to
	// load.
	RuleLoad = "load"
	// RuleError denies an action the decider could not decide (its error
	// is the reason).
	RuleError = "error"
)

// Decision is a decider's answer on an action.
type Decision struct {
	Effect Effect `json:"effect"`
	// Rule names the rule that decided: a rule of the file, or one of the
	// Rule constants.
	Rule string `json:"rule"`
	// Reason says why: the rule's reason, or its condition.
	Reason string `json:"reason,omitempty"`
	// Constraints bound the action (effect constrain, or approve once
	// approved).
	Constraints Constraints `json:"constraints,omitzero"`
}

// String is "effect (rule name: reason)".
func (d Decision) String() string {
	s := fmt.Sprintf("%s (rule %s", d.Effect, d.Rule)
	if d.Reason != "" {
		s += ": " + d.Reason
	}
	if !d.Constraints.IsZero() {
		s += "; " + d.Constraints.String()
	}
	return s + ")"
}

// Denied is the deny decision of rule with reason.
func Denied(rule, reason string) Decision { return Decision{Effect: Deny, Rule: rule, Reason: reason} }
