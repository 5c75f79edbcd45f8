package cli

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/openrath/rath"
	"github.com/openrath/rath/audit"
	"github.com/openrath/rath/policy"
	"github.com/openrath/rath/runctx"
)

// auditPolicy puts every decision of rt's policy — in a run of this
// process, local or a cluster worker's — in the audit log l, beside the
// decision chunk the run's session holds: the run, its scope, what was
// asked, the rule and the outcome — every decision a policy made (an
// action no policy applies to, policy.RuleNone, is not one). A decision
// that cannot be recorded stands (the session holds it); the failure is
// said on stderr.
func (a *app) auditPolicy(rt *rath.Runtime, l *audit.Log) {
	if rt.Policy == nil {
		return
	}
	rt.Policy = policy.Observed(rt.Policy, func(ctx context.Context, act policy.Action, dec policy.Decision, err error) {
		if err == nil && dec.Effect == policy.Allow && dec.Rule == policy.RuleNone {
			return // no policy applies: nothing was decided (the session records nothing either)
		}
		rec := audit.Record{Kind: audit.KindPolicy, Principal: "run:" + string(runctx.ID(ctx)), Tenant: act.Tenant, Project: act.Project,
			Action: act.Kind, Resource: clipText(policySubject(act), audit.MaxField), Outcome: string(dec.Effect),
			Reason: clipText("rule "+dec.Rule+": "+dec.Reason, audit.MaxField)}
		if err != nil {
			rec.Outcome, rec.Reason = audit.OutcomeDenied, clipText("the policy could not decide: "+err.Error(), audit.MaxField)
		}
		if aerr := l.Append(context.WithoutCancel(ctx), rec); aerr != nil {
			fmt.Fprintf(a.stderr, "%s: audit: %v\n", a.name, aerr)
		}
	})
}

// policySubject names what an action is about.
func policySubject(act policy.Action) string {
	switch {
	case act.Tool != "" && act.Host != "" && act.Port > 0:
		return act.Tool + " " + net.JoinHostPort(act.Host, strconv.Itoa(act.Port)) // a connection a command opened
	case act.Tool != "" && act.Host != "":
		return act.Tool + " " + act.Host
	case act.Tool != "" && act.Command != "":
		return act.Tool + ": " + act.Command
	case act.Tool != "":
		return act.Tool
	case act.Model != "":
		return act.Provider + "/" + act.Model
	case act.Scope != "":
		return act.Scope
	}
	return act.Agent
}
