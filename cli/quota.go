package cli

import (
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/openrath/rath/audit"
	"github.com/openrath/rath/cluster"
	"github.com/spf13/cobra"
)

func (a *app) quotaCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "quota",
		Short: "Set and list the quotas of tenants and projects (queued and running runs, model tokens and cost a day)",
		Long: `Quotas bound what one tenant and project may use of the cluster. Past the
queued-runs quota or a daily one, a submission is refused with "exhausted";
past the concurrent-runs quota or a daily one, a queued run waits until its
scope is under it again. Refusals and waits are in the audit log (kind
quota). A bound of 0 is no bound. These commands work on the store.`,
	}
	c.AddCommand(a.quotaSetCmd(), a.quotaLsCmd())
	return c
}

func (a *app) quotaSetCmd() *cobra.Command {
	var q cluster.Quota
	c := &cobra.Command{
		Use:   "set --tenant T --project P [--queued N] [--concurrent N] [--tokens-per-day N] [--cost-per-day USD]",
		Short: "Set a scope's quota (replacing its quota before)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if a.remote() {
				return usageErr("quotas are set where the store is, not through --server")
			}
			cl, err := a.cluster(ctx, cluster.Options{})
			if err != nil {
				return err
			}
			defer cl.Close()
			got, err := cl.SetQuota(ctx, q)
			if errors.Is(err, cluster.ErrBadQuota) {
				return usageErr("%v", err)
			}
			rec := auditOutcome(audit.Record{Kind: audit.KindQuota, Action: "quota.set", Resource: "quota/" + q.Tenant + "/" + q.Project,
				Tenant: q.Tenant, Project: q.Project, Reason: fmt.Sprintf("queued %d, concurrent %d, tokens/day %d, cost/day %g",
					q.QueuedRuns, q.ConcurrentRuns, q.TokensPerDay, q.CostPerDay)}, err)
			if aerr := a.audit(ctx, rec); aerr != nil && err == nil {
				return aerr
			}
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(got)
			}
			printQuotas(a.stdout, []cluster.Quota{*got})
			return nil
		},
	}
	c.Flags().StringVar(&q.Tenant, "tenant", "", "the tenant")
	c.Flags().StringVar(&q.Project, "project", "", "the project of the tenant")
	c.Flags().IntVar(&q.QueuedRuns, "queued", 0, "runs that may wait to be worked")
	c.Flags().IntVar(&q.ConcurrentRuns, "concurrent", 0, "runs that may run at once")
	c.Flags().Int64Var(&q.TokensPerDay, "tokens-per-day", 0, "model tokens (input and output) a UTC day")
	c.Flags().Float64Var(&q.CostPerDay, "cost-per-day", 0, "model cost in US dollars a UTC day")
	return c
}

func (a *app) quotaLsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "ls",
		Short: "The quotas, with each scope's model use today",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			cl, err := a.cluster(ctx, cluster.Options{})
			if err != nil {
				return err
			}
			defer cl.Close()
			qs, err := cl.Quotas(ctx)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(qs)
			}
			printQuotas(a.stdout, qs)
			return nil
		},
	}
}

func printQuotas(w io.Writer, qs []cluster.Quota) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TENANT\tPROJECT\tQUEUED\tCONCURRENT\tTOKENS/DAY\tCOST/DAY")
	bound := func(v any) string {
		if fmt.Sprint(v) == "0" {
			return "-"
		}
		return fmt.Sprint(v)
	}
	for _, q := range qs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", q.Tenant, q.Project, bound(q.QueuedRuns), bound(q.ConcurrentRuns), bound(q.TokensPerDay), bound(q.CostPerDay))
	}
	tw.Flush()
}
