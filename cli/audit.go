package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/openrath/rath/audit"
)

// auditCmd is `rath audit`: the store's audit log, listed and verified.
func (a *app) auditCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "audit",
		Short: "The audit log: authentications, grant and policy decisions, secrets, run control and tokens",
	}
	c.AddCommand(a.auditLsCmd(), a.auditVerifyCmd())
	return c
}

func (a *app) auditLsCmd() *cobra.Command {
	var since, until string
	var f audit.Filter
	c := &cobra.Command{
		Use:   "ls [--since DURATION|RFC3339] [--until DURATION|RFC3339] [--principal P] [--kind K] [--limit N]",
		Short: "The audit log's records, newest first",
		Long: `The audit log's records, newest first.

--since and --until take a duration back from now (90m, 24h) or an RFC 3339
time; the records listed are those in [since, until). --kind is one of
authentication, grant, policy, secret, run_control, token.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			var err error
			now := time.Now()
			if f.Since, err = parseWhen(since, now); err != nil {
				return usageErr("--since: %v", err)
			}
			if f.Until, err = parseWhen(until, now); err != nil {
				return usageErr("--until: %v", err)
			}
			if f.Limit < 0 {
				return usageErr("--limit: %d is negative", f.Limit)
			}
			rt, err := a.runtime(ctx)
			if err != nil {
				return err
			}
			rs, err := audit.List(ctx, rt.Store, f)
			if err != nil {
				return err
			}
			if a.jsonOut {
				if rs == nil {
					rs = []audit.Record{}
				}
				return a.printJSON(rs)
			}
			printAudit(a.stdout, rs)
			return nil
		},
	}
	c.Flags().StringVar(&since, "since", "", "only records at or after this: a duration back from now (24h) or an RFC 3339 time")
	c.Flags().StringVar(&until, "until", "", "only records before this: a duration back from now or an RFC 3339 time")
	c.Flags().StringVar(&f.Principal, "principal", "", "only this principal's records")
	c.Flags().StringVar(&f.Kind, "kind", "", "only records of this kind (authentication, grant, policy, secret, run_control, token)")
	c.Flags().IntVar(&f.Limit, "limit", 100, "at most this many records (0: all)")
	return c
}

// parseWhen reads a --since or --until: "" (none), a duration back from
// now, or an RFC 3339 time.
func parseWhen(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("%q is negative", s)
		}
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither a duration (24h) nor an RFC 3339 time", s)
	}
	return t, nil
}

// printAudit writes records as a table.
func printAudit(w io.Writer, rs []audit.Record) {
	if len(rs) == 0 {
		fmt.Fprintln(w, "no audit records")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tKIND\tPRINCIPAL\tTENANT\tACTION\tRESOURCE\tOUTCOME\tREASON\tREQUEST")
	for _, r := range rs {
		tenant := r.Tenant
		if r.Project != "" {
			tenant += "/" + r.Project
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Time.UTC().Format(time.RFC3339Nano), r.Kind, dash(r.Principal),
			dash(tenant), dash(r.Action), dash(r.Resource), r.Outcome, dash(oneLine(r.Reason)), dash(r.RequestID))
	}
	tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (a *app) auditVerifyCmd() *cobra.Command {
	var witness string
	c := &cobra.Command{
		Use:   "verify [--witness FILE]",
		Short: "Check the audit log's hash chains, sequence numbers and anchors; exit 1 naming each record edited, removed or reordered",
		Long: `Check the audit log's hash chains, sequence numbers and anchors; exit 1
naming each record edited, removed or reordered.

--witness FILE also checks the log against a witness file (written by the
processes given --audit-witness FILE, such as rath serve): the file's own
hash chain, and that every head it recorded is still in its lane at the
length recorded — which catches a lane cut short or rewritten with its
anchor rewritten to match, that the log alone cannot show.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			rt, err := a.runtime(ctx)
			if err != nil {
				return err
			}
			var rep audit.Report
			if witness != "" {
				f, ferr := os.Open(witness)
				if ferr != nil {
					return fmt.Errorf("audit: witness: %w", ferr)
				}
				defer f.Close()
				rep, err = audit.VerifyWitness(ctx, rt.Store, f)
			} else {
				rep, err = audit.Verify(ctx, rt.Store)
			}
			if err != nil && !errors.Is(err, audit.ErrTampered) {
				return err
			}
			if a.jsonOut {
				if perr := a.printJSON(rep); perr != nil {
					return perr
				}
			} else {
				for _, p := range rep.Problems {
					fmt.Fprintf(a.stdout, "tampered: %s\n", p)
				}
				if w := rep.Witness; w != nil {
					for _, n := range w.Torn {
						fmt.Fprintf(a.stdout, "note: witness line %d: incomplete, a write that did not finish (a crash): skipped\n", n)
					}
				}
			}
			summary := fmt.Sprintf("%d %s in %d %s", rep.Records, plural(int(rep.Records), "record", "records"),
				rep.Lanes, plural(rep.Lanes, "lane", "lanes"))
			if err != nil {
				return &codeError{code: exitError, err: fmt.Errorf("audit log: %s: %d %s: tampered", summary,
					len(rep.Problems), plural(len(rep.Problems), "problem", "problems"))}
			}
			if !a.jsonOut {
				if w := rep.Witness; w != nil {
					summary += fmt.Sprintf(": intact; the witness's %d %s on %d %s hold", w.Lines, plural(w.Lines, "line", "lines"),
						w.Lanes, plural(w.Lanes, "lane", "lanes"))
					if w.Unwitnessed > 0 {
						summary += fmt.Sprintf("; %d %s not in it", w.Unwitnessed, plural(w.Unwitnessed, "lane is", "lanes are"))
					}
				} else {
					summary += ": intact"
				}
				fmt.Fprintln(a.stdout, summary)
			}
			return nil
		},
	}
	c.Flags().StringVar(&witness, "witness", "", "also check the log against this witness file (--audit-witness): a head it recorded that is gone fails")
	return c
}
