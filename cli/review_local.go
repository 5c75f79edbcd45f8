package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/openrath/rath"
	"github.com/openrath/rath/audit"
	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/session"
)

// reviewLocal settles a run started by `rath run` that waits in
// needs_review, then resumes it here and reports its outcome (an aborted
// run only ends). It reports false for any other run (a cluster's, or one
// on a server): the cluster settles those.
func (a *app) reviewLocal(ctx context.Context, id session.ID, o cluster.ReviewOptions, quiet bool) (bool, error) {
	if a.serverURL != "" || os.Getenv("RATH_SERVER") != "" {
		return false, nil
	}
	rt, err := a.runtime(ctx)
	if err != nil {
		return true, err
	}
	u, err := rt.Unsettled(ctx, id)
	if errors.Is(err, rath.ErrNotARun) {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	if u == nil {
		return true, fmt.Errorf("run %s waits for no review", id)
	}
	err = rt.Review(ctx, id, rath.ReviewOptions{Verdict: o.Verdict, Result: o.Result, CallID: o.CallID, By: o.By, Reason: o.Reason})
	rec := auditOutcome(audit.Record{Kind: audit.KindRunControl, Action: "run.review", Resource: "run/" + string(id),
		Reason: o.Verdict + " by " + o.By + ": " + o.Reason}, err)
	if aerr := a.audit(context.WithoutCancel(ctx), rec); aerr != nil && err == nil {
		err = aerr
	}
	if err != nil {
		return true, err
	}
	fmt.Fprintf(a.stderr, "settled %s: %s\n", id, o.Verdict)
	if o.Verdict == session.VerdictAborted {
		return true, nil
	}
	return true, a.resumeRun(ctx, rt, id, quiet)
}
