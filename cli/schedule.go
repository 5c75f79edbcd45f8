package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/openrath/rath"
	"github.com/openrath/rath/client"
	"github.com/openrath/rath/cluster"
)

// scheduleCmd is `rath schedule`: cron schedules that start runs on the
// cluster.
func (a *app) scheduleCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "schedule",
		Short: "Start runs of a workflow on a cron schedule (fired by the cluster's workers, once per tick)",
	}
	c.AddCommand(a.scheduleAddCmd(), a.scheduleLsCmd(),
		a.schedulePauseCmd("pause NAME", "Stop a schedule firing until it is resumed", true),
		a.schedulePauseCmd("resume NAME", "Fire a paused schedule again, from its next tick", false),
		a.scheduleRmCmd())
	return c
}

func (a *app) scheduleAddCmd() *cobra.Command {
	var s cluster.Schedule
	var input string
	var needs []string
	c := &cobra.Command{
		Use:   `add NAME --workflow W --cron "EXPR" [--input TEXT|@FILE|-] [--needs k=v,...]`,
		Short: "Add a schedule: a run of the workflow on each tick of the cron expression",
		Long: `Add a schedule: a run of the workflow on each tick of the cron expression.

EXPR is five fields (minute hour day-of-month month day-of-week), six with a
leading seconds field ("*/10 * * * * *"), or @hourly, @daily, @weekly,
@monthly, @yearly or "@every 90s". Fields are read in UTC unless EXPR starts
with CRON_TZ=Zone ("CRON_TZ=Europe/Paris 0 9 * * 1-5").`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s.Name = args[0]
			if err := cluster.CheckScheduleName(s.Name); err != nil {
				return usageErr("%v", err)
			}
			if s.Workflow == "" || s.Cron == "" {
				return usageErr("schedule add needs --workflow and --cron")
			}
			if _, err := rath.LookupWorkflow(s.Workflow); err != nil && !a.remote() {
				return usageErr("--workflow: %v (registered: %s)", err, workflowNames())
			}
			var err error
			if s.Needs, err = cluster.ParsePairs(needs); err != nil {
				return usageErr("--needs: %v", err)
			}
			if cmd.Flags().Changed("input") {
				text, err := a.readInput(input)
				if err != nil {
					return err
				}
				s.Input = &text
			}
			return a.withCluster(ctx, func(cl adminOps) error {
				added, err := cl.AddSchedule(ctx, s)
				if errors.Is(err, cluster.ErrBadSchedule) || errors.Is(err, cluster.ErrScheduleExists) ||
					errors.Is(err, client.ErrInvalidArgument) || errors.Is(err, client.ErrConflict) {
					return usageErr("%v", err)
				}
				if err != nil {
					return err
				}
				if a.jsonOut {
					return a.printJSON(added)
				}
				if added.Paused {
					fmt.Fprintf(a.stderr, "schedule %s added, paused (rath schedule resume %s)\n", added.Name, added.Name)
				} else {
					fmt.Fprintf(a.stderr, "schedule %s added: next run %s\n", added.Name, utc(added.Next))
				}
				return nil
			})
		},
	}
	c.Flags().StringVar(&s.Workflow, "workflow", "", "the registered workflow each tick runs")
	c.Flags().StringVar(&s.Cron, "cron", "", `when: a cron expression ("0 * * * *", "*/10 * * * * *", "@every 5m")`)
	c.Flags().StringVar(&input, "input", "", "each run's input: TEXT, @FILE or - for stdin (read once, now)")
	c.Flags().StringSliceVar(&needs, "needs", nil, "what each run needs of its worker: k=v (gpu=1, region=eu)")
	c.Flags().BoolVar(&s.Paused, "paused", false, "add it paused (resume it to start)")
	return c
}

func (a *app) scheduleLsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "ls",
		Short: "The schedules: workflow, expression, state, next tick and last run",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			return a.withCluster(ctx, func(cl adminOps) error {
				ss, err := cl.Schedules(ctx)
				if err != nil {
					return err
				}
				if a.jsonOut {
					return a.printJSON(ss)
				}
				printSchedules(a.stdout, ss)
				return nil
			})
		},
	}
}

// printSchedules writes schedules as a table.
func printSchedules(w io.Writer, ss []cluster.Schedule) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tWORKFLOW\tCRON\tSTATE\tNEXT\tLAST\tLAST RUN")
	for _, s := range ss {
		state := "active"
		if s.Paused {
			state = "paused"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Workflow, s.Cron, state, utc(s.Next), utc(s.Last), orDash(string(s.LastRun)))
	}
	tw.Flush()
}

// utc is a schedule's time for people: RFC 3339 in UTC (as cron fields
// are read unless CRON_TZ says otherwise), "-" for none.
func utc(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func (a *app) schedulePauseCmd(use, short string, pause bool) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return a.withCluster(ctx, func(cl adminOps) error {
				s, err := cl.PauseSchedule(ctx, args[0], pause)
				if err != nil {
					return err
				}
				if a.jsonOut {
					return a.printJSON(s)
				}
				if pause {
					fmt.Fprintf(a.stderr, "schedule %s paused\n", s.Name)
				} else {
					fmt.Fprintf(a.stderr, "schedule %s resumed: next run %s\n", s.Name, utc(s.Next))
				}
				return nil
			})
		},
	}
}

func (a *app) scheduleRmCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "rm NAME",
		Short: "Remove a schedule (its runs are left alone)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return a.withCluster(ctx, func(cl adminOps) error {
				if err := cl.RemoveSchedule(ctx, args[0]); err != nil {
					return err
				}
				if a.jsonOut {
					return a.printJSON(map[string]any{"name": args[0], "removed": true})
				}
				fmt.Fprintf(a.stderr, "schedule %s removed\n", args[0])
				return nil
			})
		},
	}
}

// withCluster opens the cluster (the runtime's, or the --server's), calls
// fn with it, and closes it.
func (a *app) withCluster(ctx context.Context, fn func(cl adminOps) error) error {
	ops, err := a.ops(ctx)
	if err != nil {
		return err
	}
	defer ops.Close()
	return fn(ops.(adminOps))
}
