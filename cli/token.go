package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/openrath/rath/audit"
	"github.com/openrath/rath/auth"
)

// tokenCmd is `rath token`: the bearer tokens of the store.
func (a *app) tokenCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "token",
		Short: "Create, list and revoke the API's bearer tokens (kept in the store as hashes)",
		Long: `Create, list and revoke the bearer tokens the Agent Server accepts.

A token is confined to a tenant (and optionally a project) and authorizes
only its grants (rath token grants lists them). The store keeps only its
SHA-256: its secret is printed once, by create. Until the store has had a
token, requests from loopback act as the local principal; once one was
created, every request needs a token — also after every token is revoked
and rath gc has deleted them — until rath token reopen --yes. These
commands work on the store (--home, --store) directly, not through --server.`,
	}
	c.AddCommand(a.tokenCreateCmd(), a.tokenLsCmd(), a.tokenRevokeCmd(), a.tokenReopenCmd(), a.tokenGrantsCmd())
	return c
}

// tokens opens the store's tokens; a --server is refused, since tokens
// are managed where the store is.
func (a *app) tokens(ctx context.Context) (*auth.Tokens, error) {
	if a.remote() {
		return nil, usageErr("rath token works on the store itself (--home, --store), not through --server or RATH_SERVER")
	}
	rt, err := a.runtime(ctx)
	if err != nil {
		return nil, err
	}
	return auth.NewTokens(rt.Store), nil
}

func (a *app) tokenCreateCmd() *cobra.Command {
	var s auth.Spec
	var expires time.Duration
	c := &cobra.Command{
		Use:   "create --grant G [--grant G...] [--name N] [--tenant T] [--project P] [--admin] [--expires 720h]",
		Short: "Create a token; prints its secret once",
		Long: `Create a token holding the grants given (resource.verb, resource.* or, with
--admin only, *). Its secret is printed on stdout once and never again: the
store keeps only its hash. With --json, the token's record and its secret.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if expires < 0 {
				return usageErr("--expires %v is negative", expires)
			}
			if expires > 0 {
				s.Expires = time.Now().Add(expires)
			}
			tk, err := a.tokens(ctx)
			if err != nil {
				return err
			}
			secret, info, err := tk.Create(ctx, s)
			if errors.Is(err, auth.ErrBadGrant) || errors.Is(err, auth.ErrBadScope) || errors.Is(err, auth.ErrBadToken) {
				return usageErr("%v", err)
			}
			if err != nil {
				return err
			}
			if err := a.audit(ctx, audit.Record{Kind: audit.KindToken, Action: "token.create", Resource: "token/" + info.ID,
				Tenant: info.Tenant, Project: info.Project, Outcome: audit.OutcomeOK,
				Reason: fmt.Sprintf("%q holding %s", info.Name, strings.Join(info.Grants, ","))}); err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(struct {
					auth.Info
					Secret string `json:"secret"`
				}{info, secret})
			}
			fmt.Fprintln(a.stdout, secret)
			fmt.Fprintf(a.stderr, "token %s created (tenant %s, grants %s); keep its secret now: it will not be shown again\n",
				info.ID, info.Tenant, strings.Join(info.Grants, ","))
			return nil
		},
	}
	c.Flags().StringVar(&s.Name, "name", "", "what the token is for")
	c.Flags().StringVar(&s.Tenant, "tenant", auth.DefaultScope, "the tenant it acts in")
	c.Flags().StringVar(&s.Project, "project", "", "the one project it acts in (default: every project of the tenant)")
	c.Flags().StringArrayVar(&s.Grants, "grant", nil, "a grant it holds (repeat): run.read, run.*, ... (rath token grants)")
	c.Flags().BoolVar(&s.Admin, "admin", false, "allow the grant * (everything); alone, the token holds *")
	c.Flags().DurationVar(&expires, "expires", 0, "stop working after this long (720h; default never)")
	return c
}

func (a *app) tokenLsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "ls",
		Short: "The tokens: id, name, tenant, project, grants, created, expires, revoked (never a secret)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			tk, err := a.tokens(ctx)
			if err != nil {
				return err
			}
			ts, err := tk.List(ctx)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(ts)
			}
			printTokens(a.stdout, ts)
			return nil
		},
	}
}

// printTokens writes tokens as a table.
func printTokens(w io.Writer, ts []auth.Info) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tTENANT\tPROJECT\tGRANTS\tCREATED\tEXPIRES\tREVOKED")
	for _, t := range ts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, orDash(t.Name), t.Tenant, orDash(t.Project),
			strings.Join(t.Grants, ","), utc(t.Created), utc(t.Expires), utc(t.Revoked))
	}
	tw.Flush()
}

func (a *app) tokenRevokeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a token (servers refuse it within " + auth.DefaultCacheTTL.String() + ")",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			tk, err := a.tokens(ctx)
			if err != nil {
				return err
			}
			err = tk.Revoke(ctx, args[0])
			if aerr := a.audit(ctx, auditOutcome(audit.Record{Kind: audit.KindToken, Action: "token.revoke", Resource: "token/" + args[0]}, err)); aerr != nil && err == nil {
				return aerr
			}
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(map[string]any{"id": args[0], "revoked": true})
			}
			fmt.Fprintf(a.stderr, "token %s revoked\n", args[0])
			return nil
		},
	}
}

func (a *app) tokenGrantsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "grants",
		Short: "The grants a token may hold, and what each allows",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			gs := auth.Grants()
			if a.jsonOut {
				return a.printJSON(gs)
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "GRANT\tALLOWS")
			for _, g := range gs {
				fmt.Fprintf(tw, "%s\t%s\n", g.Name, g.Allows)
			}
			fmt.Fprintln(tw, "RESOURCE.*\tevery grant of the resource (run.*)")
			fmt.Fprintln(tw, "*\teverything (--admin only)")
			return tw.Flush()
		},
	}
}
