package cli

import (
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
			live, stop := a.live(cmd.Context(), rt)
			out, err := rt.Resume(cmd.Context(), id, rath.OnStart(func(r session.ID) {
				run, p = r, a.progressLive(fmt.Sprintf("resume %s", r), live)
			}))
			stop()
			if p != nil {
				p.done(err)
			}
			a.printRun(cmd.Context(), out, run, "", "", quiet, err)
			return err
		},
	}
	c.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only the output session id")
	return c
}
