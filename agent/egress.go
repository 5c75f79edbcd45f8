package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/openrath/rath/policy"
	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

// RuleAllowedHosts is the rule named by a connection refused because a
// call's constraints (allowed_hosts) do not allow its host.
const RuleAllowedHosts = "allowed_hosts"

// ErrEgressUncontrolled: a call's constraints allow it only some hosts,
// but the session's sandbox would let its command connect anywhere
// undecided (a backend without network control, such as local, or one
// without egress control with the network on), so the command is not run.
var ErrEgressUncontrolled = errors.New("agent: the sandbox cannot hold a command to the allowed hosts")

// egressRefusal says why a command of a call whose allowed hosts are
// hosts cannot run in sb, placed with spec ("" if it can): the policy
// promised those hosts only, and a promise the sandbox cannot keep is
// not made silently.
func egressRefusal(sb sandbox.Sandbox, spec session.Spec, hosts []string) string {
	if len(hosts) == 0 {
		return ""
	}
	caps := sb.Capabilities()
	switch {
	case !caps.NetworkControl:
		return fmt.Sprintf("allowed hosts %s: the %s sandbox cannot keep a command from other hosts, so the command is not run",
			strings.Join(hosts, " "), sb.Backend())
	case spec.Network && !caps.EgressControl:
		return fmt.Sprintf("allowed hosts %s: the %s sandbox has the network on and cannot decide a command's connections, so the command is not run",
			strings.Join(hosts, " "), sb.Backend())
	}
	return ""
}

// connDecider is the sandbox.Egress of call c, whose ruling is ru: each
// connection its command opens is refused if the ruling's allowed hosts
// do not hold its host, and otherwise put to the run's policy as an
// egress action with its host and port. The policy's answer is not a
// decision chunk (the command is running; the connection is recorded in
// the call's result): allow and constrain (whose allowed hosts hold the
// host) let it through, deny refuses it, and approve refuses it too (a
// connection cannot wait for a person). Without a policy every connection
// is allowed under sandbox.RuleNone, and recorded all the same.
//
// base is the run's facts (policy.Action), taken before the calls run.
func (r *run) connDecider(base policy.Action, t tool.Tool, c session.ToolCall, ru ruling) sandbox.Egress {
	pol, limits := r.pol, ru.limits
	return func(ctx context.Context, host string, port int) sandbox.Verdict {
		if !limits.AllowsHost(host) {
			return sandbox.Verdict{Rule: RuleAllowedHosts,
				Reason: fmt.Sprintf("allowed hosts %s: not %s (%s)", strings.Join(limits.AllowedHosts, " "), host, ru.why)}
		}
		if pol == nil {
			return sandbox.Verdict{Allow: true, Rule: sandbox.RuleNone, Reason: "no policy decides the run's actions"}
		}
		a := base
		a.Kind, a.Tool, a.Host, a.Port = policy.KindEgress, c.Name, host, port
		a.Risk, a.Idempotent = tool.RiskOf(t), t.Idempotent()
		d, err := pol.Decide(ctx, a)
		switch {
		case err != nil:
			return sandbox.Verdict{Rule: policy.RuleError, Reason: "the policy could not decide, so the connection is refused: " + err.Error()}
		case d.Effect == policy.Allow:
			return sandbox.Verdict{Allow: true, Rule: d.Rule, Reason: d.Reason}
		case d.Effect == policy.Constrain:
			if !d.Constraints.AllowsHost(host) {
				return sandbox.Verdict{Rule: d.Rule, Reason: "allowed hosts " + strings.Join(d.Constraints.AllowedHosts, " ") + ": not " + host}
			}
			return sandbox.Verdict{Allow: true, Rule: d.Rule, Reason: d.Reason}
		case d.Effect == policy.Approve:
			return sandbox.Verdict{Rule: d.Rule, Reason: "approval asked, but a connection cannot wait for one, so it is refused: " + d.Reason}
		case d.Effect == policy.Deny:
			return sandbox.Verdict{Rule: d.Rule, Reason: d.Reason}
		}
		return sandbox.Verdict{Rule: policy.RuleError, Reason: fmt.Sprintf("the policy answered %q, not an effect, so the connection is refused (rule %s)", d.Effect, d.Rule)}
	}
}

// egressSandbox is a call's view of the session's sandbox: every command
// it runs has its connections decided by the call's decider (and by the
// tool's own Egress, if it set one: both must allow), and the decisions
// the sandbox recorded are kept for the call's result.
type egressSandbox struct {
	sandbox.Sandbox
	decide sandbox.Egress
	log    *connLog
	// refuse, if set, says why no command runs (egressRefusal).
	refuse string
}

// Exec implements sandbox.Sandbox.
func (s *egressSandbox) Exec(ctx context.Context, c sandbox.Command) (sandbox.Result, error) {
	if s.refuse != "" {
		return sandbox.Result{}, tool.Errorf(session.ToolErrPolicy, ErrEgressUncontrolled, s.refuse)
	}
	if own := c.Egress; own != nil {
		c.Egress = func(ctx context.Context, host string, port int) sandbox.Verdict {
			v := s.decide(ctx, host, port)
			if v.Allow {
				v = own(ctx, host, port)
			}
			return v
		}
	} else {
		c.Egress = s.decide
	}
	res, err := s.Sandbox.Exec(ctx, c)
	s.log.keep(res.Egress, res.EgressDropped)
	return res, err
}

// connLog is a call's connections, as its commands' sandbox recorded
// them, the first sandbox.MaxConnections of them.
type connLog struct {
	mu      sync.Mutex
	kept    []sandbox.Connection
	dropped int64
}

func (l *connLog) keep(cs []sandbox.Connection, dropped int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := min(max(sandbox.MaxConnections-len(l.kept), 0), len(cs))
	l.kept = append(l.kept, cs[:n]...)
	l.dropped += dropped + int64(len(cs)-n)
}

// evidence is what the call's result records: the connections, and a
// note counting those past the record (nil if none).
func (l *connLog) evidence() ([]session.Connection, *session.ToolNote) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dropped == 0 {
		return l.kept, nil
	}
	n := session.NewToolNote(session.ToolNoteEgress,
		fmt.Sprintf("%d more connections were decided than the %d recorded", l.dropped, len(l.kept)))
	return l.kept, &n
}
