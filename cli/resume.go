package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/openrath/rath"
	"github.com/openrath/rath/session"
)

func (a *app) resumeCmd() *cobra.Command {
	var quiet bool
	c := &cobra.Command{
		Use:   "resume ID",
		Short: "Finish an interrupted run with its registered workflow and report its outcome",
		Long: `Finish an interrupted run (rath ls shows it "interrupted": its process died, or Ctrl-C or SIGTERM
stopped it, before it ended). ID is the run's id or any session of the run. The recorded steps are
served from the record and the rest runs live. A call to a tool that is not idempotent, cut short
when the run stopped, is not made again: the run waits in needs_review until "rath review" says
whether its effect happened. A run that is live, finished, or whose workflow is not registered
is refused. Ctrl-C stops a resume as it stops a run.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, rt, err := a.withID(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return a.resumeRun(cmd.Context(), rt, id, quiet)
		},
	}
	c.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only the output session id")
	a.graceFlag(c)
	return c
}

// resumeRun resumes run id (or the run of session id) with progress, and
// reports its outcome.
func (a *app) resumeRun(ctx context.Context, rt *rath.Runtime, id session.ID, quiet bool) error {
	var run session.ID
	var p *progress
	live, stop := a.live(ctx, rt)
	opts := append([]rath.RunOption{rath.OnStart(func(r session.ID) {
		run, p = r, a.progressLive(fmt.Sprintf("resume %s", r), live)
	})}, a.stopOn(ctx)...)
	out, err := rt.Resume(ctx, id, opts...)
	stop()
	if p != nil {
		p.done(err)
	}
	if errors.Is(err, rath.ErrInterrupted) {
		return a.interrupted(ctx, run, err)
	}
	if errors.Is(err, rath.ErrNeedsReview) {
		return fmt.Errorf("%w; settle it with: %s review %s --happened [--result @FILE] | --not-happened | --abort", err, a.self(), run)
	}
	a.printRun(ctx, out, run, "", "", quiet, err)
	return err
}
