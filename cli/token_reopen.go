package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/openrath/rath/audit"
	"github.com/openrath/rath/auth"
)

// tokenReopenCmd is `rath token reopen`: the operator's deliberate act
// that lets loopback requests without a credential act as the local
// principal again in a store that has had tokens.
func (a *app) tokenReopenCmd() *cobra.Command {
	var yes bool
	c := &cobra.Command{
		Use:   "reopen --yes",
		Short: "Let loopback requests without a token act as the local principal again (after every token is revoked)",
		Long: `Once a store has had a token, every request to the Agent Server needs a
credential, loopback included — also after every token is revoked and rath gc
has deleted them: the store keeps a seal that gc never collects. reopen
removes that: requests without a credential from loopback act again as the
local principal, holding every grant, until the next token is created.

It is refused while a token still works (revoke it first: rath token revoke
ID), needs --yes, and is recorded in the audit log as token.reopen by the
operator who ran it. Servers apply it within ` + auth.DefaultCacheTTL.String() + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if !yes {
				return usageErr("reopen lets every request from loopback without a token act with every grant; confirm with --yes")
			}
			tk, err := a.tokens(ctx)
			if err != nil {
				return err
			}
			err = tk.Reopen(ctx)
			rec := auditOutcome(audit.Record{Kind: audit.KindToken, Action: "token.reopen", Resource: "store",
				Reason: "loopback requests without a credential act as the local principal"}, err)
			if aerr := a.audit(ctx, rec); aerr != nil && err == nil {
				return aerr
			}
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(map[string]any{"reopened": true})
			}
			fmt.Fprintln(a.stderr, "store reopened: loopback requests without a token act as the local principal until the next token is created")
			return nil
		},
	}
	c.Flags().BoolVar(&yes, "yes", false, "confirm: reopen the store to requests without a credential on loopback")
	return c
}
