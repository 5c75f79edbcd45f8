package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/openrath/rath"
	"github.com/openrath/rath/session"
)

func (a *app) resumeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "resume ID",
		Short: "Finish an interrupted run with its registered workflow; prints the output session id",
		Long: `Finish an interrupted run (rath ls shows it "interrupted": its process died before it ended).
ID is the run's id or any session of the run. The recorded steps are replayed and the rest runs
live; a call to a tool that is not idempotent, cut short when the run stopped, is not made again
but recorded as interrupted. A run that is live, finished, or whose workflow is not registered
is refused.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, rt, err := a.withID(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			var run session.ID
			var p *progress
			out, err := rt.Resume(cmd.Context(), id, rath.OnStart(func(r session.ID) {
				run, p = r, a.progress(fmt.Sprintf("resume %s", r))
			}))
			if p != nil {
				p.done(err)
			}
			a.printRun(out, run, "", err)
			return err
		},
	}
}
