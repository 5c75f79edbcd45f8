package tool

import "strings"

// Risks a tool may declare: how much harm a call could do if it went
// wrong. A policy sees it among a call's facts (action.risk); a call to a
// tool that is not idempotent and whose risk is high needs a person's
// approval unless a policy rule decides otherwise.
const (
	RiskLow    = "low"    // reads, searches: nothing changes
	RiskMedium = "medium" // bounded changes to the workspace
	RiskHigh   = "high"   // commands, code, outside effects: anything may change
)

// Risky is implemented by tools that declare their risk.
type Risky interface {
	Risk() string
}

// RiskOf returns t's declared risk in lower case ("" when it declares
// none).
func RiskOf(t Tool) string {
	if r, ok := t.(Risky); ok {
		return strings.ToLower(r.Risk())
	}
	return ""
}

// WithRisk declares a Func tool's risk (RiskLow, RiskMedium, RiskHigh).
func WithRisk[In any](risk string) Option[In] { return func(o *options[In]) { o.risk = risk } }

// AtRisk returns t declaring risk (for tools not made with Func, such as
// MCP tools); t's other declarations (UsesSandbox) are kept.
func AtRisk(t Tool, risk string) Tool { return risky{Tool: t, risk: risk} }

type risky struct {
	Tool
	risk string
}

func (r risky) Risk() string      { return r.risk }
func (r risky) UsesSandbox() bool { return UsesSandbox(r.Tool) }

// Risk is the wrapped tool's risk: InSandbox keeps it.
func (s sandboxed) Risk() string { return RiskOf(s.Tool) }
