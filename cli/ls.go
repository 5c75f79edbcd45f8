package cli

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/openrath/rath/store"
)

func (a *app) lsCmd() *cobra.Command {
	var status, op string
	var limit int
	var all bool
	c := &cobra.Command{
		Use:   "ls",
		Short: "List runs: workflow, state, steps, duration (--all: every session too; a run whose process died is shown interrupted)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			want, err := parseStatuses(status)
			if err != nil {
				return err
			}
			rt, err := a.runtime(cmd.Context())
			if err != nil {
				return err
			}
			f := store.Filter{Op: op, Limit: limit}
			if !all {
				f.Limit = 0 // runs are picked from every session lsRow
			}
			infos, err := listJudged(cmd.Context(), rt, f, want)
			if err != nil {
				return err
			}
			runs, rest := split(infos, time.Now())
			if !all && limit > 0 && len(runs) > limit {
				runs = runs[:limit]
			}
			if a.jsonOut {
				if all {
					return a.printJSON(append(runs, rest...))
				}
				return a.printJSON(runs)
			}
			if err := printRuns(a.stdout, runs); err != nil {
				return err
			}
			if !all {
				if len(rest) > 0 {
					fmt.Fprintf(a.stdout, "\n%d more session(s), the runs' agents, forks and outputs or of no run: rath ls --all lists them\n", len(rest))
				}
				return nil
			}
			fmt.Fprintln(a.stdout)
			return printSessions(a.stdout, rest)
		},
	}
	c.Flags().StringVar(&status, "status", "", "only these statuses (comma-separated): open, active, paused, interrupted, closed, archived, failed")
	c.Flags().StringVar(&op, "op", "", "only sessions made by this lineage op")
	c.Flags().IntVar(&limit, "limit", 0, "at most this many (0: all)")
	c.Flags().BoolVar(&all, "all", false, "list every session, not only runs: their agents' sessions, forks, outputs")
	return c
}

// split tells the runs among infos (newest first, as lsRow) from the
// other sessions.
func split(infos []store.Info, now time.Time) (runs, rest []lsRow) {
	runs, rest = []lsRow{}, []lsRow{} // listed as [] when empty
	for _, info := range infos {
		if s := summarize(info, now); s != nil {
			runs = append(runs, lsRow{Info: info, Run: s})
		} else {
			rest = append(rest, lsRow{Info: info})
		}
	}
	return runs, rest
}

// printRuns writes the runs table.
func printRuns(w io.Writer, runs []lsRow) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTATE\tWORKFLOW\tSTEPS\tDURATION\tSTARTED")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Run.State, orDash(r.Run.Workflow), r.Run.steps(), r.Run.duration(),
			r.Created.Local().Format(time.DateTime))
	}
	return tw.Flush()
}

// printSessions writes the sessions table.
func printSessions(w io.Writer, infos []lsRow) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tSTATUS\tOP\tCHUNKS\tUPDATED")
	for _, i := range infos {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", i.ID, i.Status, orDash(i.Lineage.Op), i.Len, i.Updated.Local().Format(time.DateTime))
	}
	return tw.Flush()
}
