package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/openrath/rath/policy"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

// PolicySelector is the Selector of the decision chunks that record a
// policy's decisions on a run's actions.
const PolicySelector = "policy"

// ruling is what the policy decided on an action (for a tool call: on
// the call and on the command it runs and the hosts it reaches, taken
// together).
type ruling struct {
	effect policy.Effect
	limits policy.Constraints
	// why is the decision chunk's reason: "<subject>: rule <name>: <reason>".
	why string
}

// decider is the run's decider: the agent's own, else its context's.
func (a *Agent) decider(ctx context.Context) policy.Decider {
	if d := a.cfg.Decider; d != nil {
		return d
	}
	return policy.From(ctx)
}

// facts are the facts every action of the run shares.
func (r *run) facts(kind string) policy.Action {
	if r.scope == nil {
		sc := runctx.Scope(r.ctx)
		r.scope = &sc
	}
	return policy.Action{Kind: kind, Tenant: r.scope.Tenant, Project: r.scope.Project, Agent: r.a.cfg.Name,
		Placement: r.s.Placement().Backend}
}

// decide puts action a, named subject in the record, to the run's decider
// before it happens and records the decision as a decision chunk. Under a
// replay the record's decision is served instead (the policy may have
// changed since: the record says what was decided then); a record that
// goes on at this node without one made none, and none is made. ok is
// false when no decision was made (no decider either): the action goes on
// as it would without a policy; so it is when the decider allows by
// policy.RuleNone (no policy applies). Kinds that cannot wait for a person
// have approve recorded as deny.
func (r *run) decide(a policy.Action, subject string) (ru ruling, ok bool, err error) {
	if r.player != nil {
		if c, more := r.player.Peek(r.node); more {
			if !isPolicyDecision(c) {
				return ruling{effect: policy.Allow}, false, nil
			}
			if strings.HasPrefix(c.Decision.Reason, subject+": ") {
				return r.serveDecision()
			}
			// A different decision: deciding live, the append reports
			// the divergence.
		}
	}
	if r.pol == nil {
		return ruling{effect: policy.Allow}, false, nil
	}
	d, derr := r.pol.Decide(r.ctx, a)
	if derr == nil && d.Effect == policy.Allow && d.Rule == policy.RuleNone {
		// No policy applies: the action goes on as it would without a
		// decider, and nothing is recorded.
		return ruling{effect: policy.Allow}, false, nil
	}
	if derr != nil {
		d = policy.Denied(policy.RuleError, "the policy could not decide, so the action is denied: "+derr.Error())
	}
	if !d.Effect.Valid() {
		d = policy.Denied(policy.RuleError, fmt.Sprintf("the policy answered %q, not an effect, so the action is denied (rule %s)", d.Effect, d.Rule))
	}
	reason := d.Reason
	if d.Effect == policy.Approve && !canWait(a.Kind) {
		d.Effect = policy.Deny
		reason = "approval asked, but a " + a.Kind + " action cannot wait for one, so it is denied: " + reason
	}
	if d.Effect == policy.Deny || d.Effect == policy.Allow {
		d.Constraints = policy.Constraints{}
	}
	ru = ruling{effect: d.Effect, limits: d.Constraints, why: subject + ": rule " + d.Rule + ": " + reason}
	if err := r.add(session.Of(decisionChunk(ru))); err != nil {
		return ru, true, err
	}
	return ru, true, nil
}

// canWait reports whether an action of kind can wait for a person's
// approval: the actions of a tool call can (the run pauses on the approval
// gate); a model call or a memory operation cannot.
func canWait(kind string) bool {
	return kind == policy.KindTool || kind == policy.KindExec || kind == policy.KindEgress
}

// deciding reports whether the run's next action may be decided: it has
// a decider, or it replays a record whose next chunk is a decision.
func (r *run) deciding() bool {
	if r.pol != nil {
		return true
	}
	if r.player == nil {
		return false
	}
	c, ok := r.player.Peek(r.node)
	return ok && isPolicyDecision(c)
}

// serveDecision appends the record's next chunk, a policy decision, and
// returns its ruling.
func (r *run) serveDecision() (ruling, bool, error) {
	var got *session.Decision
	s, _, err := runctx.Served(r.ctx, r.s, r.node, func(c session.Chunk) bool {
		if got != nil || !isPolicyDecision(c) {
			return false
		}
		got = c.Decision
		return true
	})
	r.s = s
	if err != nil || got == nil {
		return ruling{effect: policy.Deny, why: "the recorded policy decision could not be served"}, true, err
	}
	return rulingOf(got), true, nil
}

// decisionChunk is the decision chunk recording ru: the four effects as
// candidates, the chosen one's description holding its constraints (JSON).
func decisionChunk(ru ruling) *session.Decision {
	cs := make([]session.Candidate, len(policy.Effects))
	for i, e := range policy.Effects {
		cs[i].Name = string(e)
		if e == ru.effect && !ru.limits.IsZero() {
			b, _ := json.Marshal(ru.limits)
			cs[i].Description = string(b)
		}
	}
	return &session.Decision{Selector: PolicySelector, Candidates: cs, Choice: string(ru.effect), Reason: ru.why}
}

// rulingOf reads a recorded policy decision back; one that does not read
// (an unknown effect, constraints that do not decode) denies.
func rulingOf(d *session.Decision) ruling {
	ru := ruling{effect: policy.Effect(d.Choice), why: d.Reason}
	if !ru.effect.Valid() {
		return ruling{effect: policy.Deny, why: d.Reason + " (recorded effect " + strconv.Quote(d.Choice) + " is unknown: denied)"}
	}
	for _, c := range d.Candidates {
		if c.Name == d.Choice && c.Description != "" {
			if err := json.Unmarshal([]byte(c.Description), &ru.limits); err != nil {
				return ruling{effect: policy.Deny, why: d.Reason + " (recorded constraints unreadable: denied: " + err.Error() + ")"}
			}
		}
	}
	return ru
}

func isPolicyDecision(c session.Chunk) bool {
	return c.Decision != nil && c.Decision.Selector == PolicySelector
}

// and is the ruling of an action decided as a and b: the stricter effect,
// both constraints.
func (a ruling) and(b ruling) ruling {
	switch {
	case a.effect == policy.Deny:
		return a
	case b.effect == policy.Deny:
		return b
	}
	out := a
	if b.effect.Strictness() > a.effect.Strictness() {
		out.effect, out.why = b.effect, b.why
	}
	limits, err := a.limits.Merge(b.limits)
	if err != nil {
		return ruling{effect: policy.Deny, why: a.why + "; " + b.why + ": the constraints conflict, so the call is denied: " + err.Error()}
	}
	out.limits = limits
	return out
}

// callSubject names a tool call's action of kind in the record.
func callSubject(kind string, c session.ToolCall) string {
	return kind + " " + c.Name + " (call " + c.ID + ")"
}

// decideModel decides the step's model call; a denied call is an error
// wrapping policy.ErrDenied.
func (r *run) decideModel(step int) (ruling, error) {
	if !r.deciding() {
		return ruling{effect: policy.Allow}, nil
	}
	a := r.facts(policy.KindModel)
	a.Model, a.Provider = r.a.cfg.Model.Name(), r.a.cfg.Model.Provider()
	ru, _, err := r.decide(a, fmt.Sprintf("model %s (step %d)", a.Model, step))
	if err != nil {
		return ru, err
	}
	if ru.effect == policy.Deny {
		return ru, fmt.Errorf("agent %s: %w: %s", r.a.cfg.Name, policy.ErrDenied, ru.why)
	}
	return ru, nil
}

// decideMemory decides a memory read or write on scopes; go is false when
// it is denied (the decision chunk says so; the operation is skipped).
func (r *run) decideMemory(kind string, scopes []string) (ruling, bool, error) {
	if !r.deciding() {
		return ruling{effect: policy.Allow}, true, nil
	}
	a := r.facts(kind)
	a.Scopes = scopes
	if len(scopes) > 0 {
		a.Scope = scopes[0]
	}
	ru, _, err := r.decide(a, kind+" "+strings.Join(scopes, ","))
	return ru, err == nil && ru.effect != policy.Deny, err
}

// decideCalls decides a step's tool calls before any runs: each call as
// a tool action, then, unless that denies it, the command it runs (exec)
// and each host it reaches (egress); a call's ruling is the strictest of
// its decisions, with all their constraints. Calls to unknown tools and
// calls with arguments that are not JSON are not decided (they do not
// run).
func (r *run) decideCalls(calls []session.ToolCall) error {
	clear(r.rulings)
	if !r.deciding() {
		return nil
	}
	for _, c := range calls {
		t := r.a.tools[c.Name]
		if t == nil || !c.ArgsValid() {
			continue
		}
		a := r.facts(policy.KindTool)
		a.Tool, a.Risk, a.Idempotent = c.Name, tool.RiskOf(t), t.Idempotent()
		if err := json.Unmarshal(c.Args, &a.Args); err != nil || a.Args == nil {
			a.Args = nil
		}
		ru, ok, err := r.decide(a, callSubject(policy.KindTool, c))
		if err != nil {
			return err
		}
		rs := t.Resources(c.Args)
		if line, isExec := tool.Command(t, rs, c.Args); isExec && ru.effect != policy.Deny {
			x := a
			x.Kind, x.Command = policy.KindExec, line
			more, decided, err := r.decide(x, callSubject(policy.KindExec, c))
			if err != nil {
				return err
			}
			ok = ok || decided
			ru = ru.and(more)
		}
		for _, h := range tool.Hosts(rs, c.Args) {
			if ru.effect == policy.Deny {
				break
			}
			x := a
			x.Kind, x.Host = policy.KindEgress, h
			more, decided, err := r.decide(x, callSubject(policy.KindEgress, c)+" "+h)
			if err != nil {
				return err
			}
			ok = ok || decided
			ru = ru.and(more)
		}
		if ok {
			if r.rulings == nil {
				r.rulings = map[string]ruling{}
			}
			r.rulings[c.ID] = ru
		}
	}
	return nil
}

// recordedRulings reads, from the policy decisions s holds after its last
// assistant turn, the rulings on calls (a run resumed after a pause).
func recordedRulings(s *session.Session, calls []session.ToolCall) map[string]ruling {
	var out map[string]ruling
	for i := s.Len() - 1; i >= 0; i-- {
		c := s.Chunk(i)
		if c.Assistant != nil {
			break
		}
		if !isPolicyDecision(c) {
			continue
		}
		for _, tc := range calls {
			if !recordedOn(c.Decision.Reason, tc) {
				continue
			}
			ru := rulingOf(c.Decision)
			if prev, ok := out[tc.ID]; ok {
				ru = ru.and(prev) // read last first: ru came before prev
			}
			if out == nil {
				out = map[string]ruling{}
			}
			out[tc.ID] = ru
		}
	}
	return out
}

// recordedOn reports whether a decision's reason is on call c.
func recordedOn(reason string, c session.ToolCall) bool {
	for _, kind := range []string{policy.KindTool, policy.KindExec, policy.KindEgress} {
		subject := callSubject(kind, c)
		if rest, ok := strings.CutPrefix(reason, subject); ok && (strings.HasPrefix(rest, ": ") || kind == policy.KindEgress && strings.HasPrefix(rest, " ")) {
			return true
		}
	}
	return false
}

// deniedResult is the error result of a call a policy denied.
func deniedResult(c session.ToolCall, ru ruling) session.ToolResult {
	return session.ToolResult{CallID: c.ID, Tool: c.Name, Args: c.Args,
		Error: &session.ToolError{Kind: session.ToolErrPolicy, Message: "denied by policy: " + ru.why}}
}

// refusal says why the constraints of ru refuse a call with arguments
// args touching rs ("" if they do not).
func (ru ruling) refusal(rs []tool.Resource, args json.RawMessage) string {
	l := ru.limits
	if l.IsZero() {
		return ""
	}
	for _, x := range rs {
		p, isPath := strings.CutPrefix(x.Key, "path:")
		switch {
		case l.ReadOnly && x.Access == tool.Exclusive:
			return "read-only: the call runs a command, which may write anything"
		case l.ReadOnly && x.Access == tool.Write:
			return "read-only: the call writes " + describe(x.Key)
		case l.WorkspaceRoot != "" && x.Access == tool.Exclusive:
			return "workspace root " + l.WorkspaceRoot + ": the call runs a command, which may touch any path"
		case l.WorkspaceRoot != "" && isPath && !l.Within(p):
			return "workspace root " + l.WorkspaceRoot + ": the call touches " + describe(x.Key) + ", outside it"
		}
	}
	if len(l.AllowedHosts) == 0 {
		return ""
	}
	for _, h := range tool.Hosts(rs, args) {
		if !l.AllowsHost(h) {
			return "allowed hosts " + strings.Join(l.AllowedHosts, " ") + ": the call reaches " + h
		}
	}
	return ""
}

func describe(key string) string {
	if p, ok := strings.CutPrefix(key, "path:"); ok {
		if p == "" {
			return "the workspace root"
		}
		return p
	}
	return key
}

// within is ctx bounded by ru's timeout, if it has one.
func (ru ruling) within(ctx context.Context) (context.Context, context.CancelFunc) {
	if d := ru.limits.Timeout; d > 0 {
		return context.WithTimeoutCause(ctx, d, fmt.Errorf("%w of %s (%s)", errPolicyTimeout, d, ru.why))
	}
	return ctx, func() {}
}

// errPolicyTimeout is the cause of a call's context ended by a policy's
// timeout.
var errPolicyTimeout = errors.New("the policy's timeout")
