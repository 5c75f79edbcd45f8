package cli

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/openrath/rath"
	"github.com/openrath/rath/audit"
	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/secret"
	"github.com/openrath/rath/session"
)

// The command line acts on the store directly as the local operator: what
// it changes that the server would audit — token changes, run control —
// it audits itself, in the same log (a command's records are one lane of
// their own). With --server, the server audits instead.

// auditFlags adds the flags of the audit log every command writes to.
func (a *app) auditFlags(root *cobra.Command) {
	root.PersistentFlags().StringVar(&a.auditWitness, "audit-witness", "", "also publish the heads of the audit log this process writes to this file, outside the database (env RATH_AUDIT_WITNESS; checked by rath audit verify --witness)")
}

// openAudit opens the process's audit log on rt's store (it writes
// nothing until a record comes), closed with rt, and records every secret
// resolution in it (package secret's observer): which reference, for what,
// for whom — the principal the resolution is made for (secret.WithActor:
// a tenant's webhook), else this command's user — and whether it
// resolved — never a value. With --audit-witness (or RATH_AUDIT_WITNESS)
// the log publishes its heads to that witness file.
func (a *app) openAudit(ctx context.Context, rt *rath.Runtime) error {
	o := audit.Options{WitnessFile: a.auditWitness,
		Logger: slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	if o.WitnessFile == "" {
		o.WitnessFile = os.Getenv("RATH_AUDIT_WITNESS")
	}
	l, err := audit.Open(ctx, rt.Store, o)
	if err != nil {
		return err // audit's errors say "audit:"
	}
	rt.OnClose(l.Close)
	remove := secret.Observe(func(ctx context.Context, ref secret.Ref, err error) {
		rec := auditOutcome(audit.Record{Kind: audit.KindSecret, Principal: "cli:" + whoAmI(), Action: "secret.resolve",
			Resource: clipText(ref.String(), audit.MaxField), Reason: secret.Purpose(ctx)}, err)
		if who, ok := secret.ActorOf(ctx); ok {
			rec.Principal, rec.Tenant, rec.Project = cmp.Or(who.Principal, rec.Principal), who.Tenant, who.Project
		}
		if aerr := l.Append(context.WithoutCancel(ctx), rec); aerr != nil {
			fmt.Fprintf(a.stderr, "%s: audit: %v\n", a.name, aerr)
		}
	})
	rt.OnClose(func() error { remove(); return nil }) // closers run last first: before the log's
	a.auditPolicy(rt, l)
	a.alog = l
	return nil
}

// audit appends rec to the store's audit log as the local operator. A
// record that cannot be written fails the command after the fact: the act
// happened, and the operator must know it went unrecorded.
func (a *app) audit(ctx context.Context, rec audit.Record) error {
	if _, err := a.runtime(ctx); err != nil {
		return err
	}
	if rec.Principal == "" {
		rec.Principal = "cli:" + whoAmI()
	}
	if err := a.alog.Append(ctx, rec); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// auditOutcome is rec's outcome and reason for err.
func auditOutcome(rec audit.Record, err error) audit.Record {
	rec.Outcome = audit.OutcomeOK
	if err != nil {
		rec.Outcome, rec.Reason = audit.OutcomeFailed, rec.Reason+" ("+err.Error()+")"
	}
	rec.Reason = clipText(rec.Reason, audit.MaxField)
	return rec
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// auditedOps is the local cluster whose run control is audited.
type auditedOps struct {
	localOps
	a *app
}

func (o auditedOps) control(ctx context.Context, action string, id session.ID, detail string, err error) error {
	rec := auditOutcome(audit.Record{Kind: audit.KindRunControl, Action: action, Resource: "run/" + string(id), Reason: detail}, err)
	if aerr := o.a.audit(context.WithoutCancel(ctx), rec); aerr != nil && err == nil {
		return aerr
	}
	return err
}

func (o auditedOps) Cancel(ctx context.Context, id session.ID, by, reason string) error {
	return o.control(ctx, "run.cancel", id, "by "+by+": "+reason, o.localOps.Cancel(ctx, id, by, reason))
}

func (o auditedOps) Approve(ctx context.Context, id session.ID, approve bool, by, reason string) error {
	verdict := "approve"
	if !approve {
		verdict = "deny"
	}
	return o.control(ctx, "approval.decide", id, verdict+" by "+by+": "+reason, o.localOps.Approve(ctx, id, approve, by, reason))
}

func (o auditedOps) Review(ctx context.Context, id session.ID, ro cluster.ReviewOptions) error {
	return o.control(ctx, "run.review", id, ro.Verdict+" by "+ro.By+": "+ro.Reason, o.localOps.Review(ctx, id, ro))
}
