package cli

import (
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/openrath/rath/memory"
)

func (a *app) memoryLsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "ls [PREFIX]",
		Short: "List the entries under a URI prefix (all without one): URI, content, writer session, kind, time",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			prefix := prefixArg(args)
			m, err := a.memory(cmd.Context())
			if err != nil {
				return err
			}
			es, err := m.List(cmd.Context(), prefix)
			if err != nil {
				return err
			}
			if a.jsonOut {
				out := make([]entryJSON, 0, len(es))
				for _, e := range es {
					out = append(out, toEntryJSON(e))
				}
				return a.printJSON(out)
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "URI\tCONTENT\tSESSION\tKIND\tTIME")
			for _, e := range es {
				p := e.Provenance
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.URI, excerpt(e.Content, 48), orDash(string(p.Session)), orDash(p.Kind), when(p.Time))
			}
			return tw.Flush()
		},
	}
}

func (a *app) memoryShowCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show URI",
		Short: "Show an entry: its content and full provenance",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			u, err := memoryURI(args[0])
			if err != nil {
				return err
			}
			m, err := a.memory(cmd.Context())
			if err != nil {
				return err
			}
			e, err := m.Get(cmd.Context(), u)
			if errors.Is(err, memory.ErrNotFound) {
				return fmt.Errorf("no memory entry at %s", u)
			} else if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(toEntryJSON(e))
			}
			p := e.Provenance
			fmt.Fprintf(a.stdout, "uri       %s\nsession   %s\nagent     %s\nkind      %s\ntime      %s\nhash      %s\n",
				e.URI, orDash(string(p.Session)), orDash(p.Agent), orDash(p.Kind), when(p.Time), e.Hash())
			for i, id := range p.Evidence {
				label := ""
				if i == 0 {
					label = "evidence"
				}
				fmt.Fprintf(a.stdout, "%-9s %s\n", label, id)
			}
			if len(p.Evidence) == 0 {
				fmt.Fprintln(a.stdout, "evidence  -")
			}
			fmt.Fprintf(a.stdout, "\n%s\n", e.Content)
			return nil
		},
	}
}
