package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/session"
)

func (a *app) memoryForgetCmd() *cobra.Command {
	var prefix, derived string
	c := &cobra.Command{
		Use:   "forget URI | --prefix P | --derived-from SESSION",
		Short: "Forget one entry, every entry under a prefix, or every entry a session wrote; the forget is recorded in a new session",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			given := len(args)
			for _, f := range []string{"prefix", "derived-from"} {
				if cmd.Flags().Changed(f) {
					given++
				}
			}
			if given != 1 {
				return usageErr("forget takes exactly one of URI, --prefix P or --derived-from SESSION")
			}
			var sel memory.Selector
			var form string
			switch {
			case len(args) == 1:
				u, err := memoryURI(args[0])
				if err != nil {
					return err
				}
				sel.URI, form = u.String(), u.String()
			case cmd.Flags().Changed("prefix"):
				if prefix == "" {
					return usageErr("--prefix needs a URI prefix, such as memory://project/rath/")
				}
				sel.Prefix, form = memoryPrefix(prefix), "--prefix "+memoryPrefix(prefix)
			default:
				id, err := sessionID(derived)
				if err != nil {
					return err
				}
				sel, form = memory.DerivedFrom(id), "--derived-from "+string(id)
			}
			return a.forget(cmd.Context(), form, sel)
		},
	}
	c.Flags().StringVar(&prefix, "prefix", "", "forget every entry under this URI prefix")
	c.Flags().StringVar(&derived, "derived-from", "", "forget every entry this session wrote (roll its writes back)")
	return c
}

// forget records a person's forget in a new session: the request is
// committed first, then the forget chunks the memory appends to it. A
// forget of what a resumed step's session wrote also forgets what the
// interrupted attempts it resumes wrote (memory.Attempts), one chunk each.
func (a *app) forget(ctx context.Context, form string, sel memory.Selector) error {
	m, err := a.memory(ctx)
	if err != nil {
		return err
	}
	st := a.rt.Store
	sels := []memory.Selector{sel}
	if sel.Session != "" {
		if info, err := st.Info(ctx, sel.Session); err == nil {
			for _, at := range memory.Attempts(sel.Session, info.Lineage)[1:] {
				at.URI, at.Prefix = sel.URI, sel.Prefix
				sels = append(sels, at)
			}
		}
	}
	req := session.FromUser("rath memory forget " + form)
	if err := commit(ctx, st, req); err != nil {
		return fmt.Errorf("record the forget: %w", err)
	}
	if err := st.SetLabel(ctx, req.ID(), "rath.command", "memory forget"); err != nil {
		return fmt.Errorf("record the forget: %w", err)
	}
	n, done := 0, req
	for _, sel := range sels {
		k, next, err := m.Forget(ctx, done, sel)
		if err != nil {
			if n > 0 {
				_ = st.Commit(ctx, done, req.Head())
			}
			return fmt.Errorf("%w (the request is recorded in session %s)", err, req.ID())
		}
		n, done = n+k, next
	}
	if err := st.Commit(ctx, done, req.Head()); err != nil {
		return fmt.Errorf("forgot %s but could not record it in session %s: %w", entries(n), req.ID(), err)
	}
	var uris []string
	for i, c := range done.All() {
		if i >= req.Len() && c.Memory != nil {
			uris = append(uris, c.Memory.Forgotten...)
		}
	}
	if a.jsonOut {
		return a.printJSON(map[string]any{"forgotten": n, "uris": orEmpty(uris), "selector": sel.String(), "session": done.ID()})
	}
	if n == 0 {
		fmt.Fprintf(a.stdout, "forgot 0 entries: nothing matched %s; recorded in session %s\n", sel, done.ID())
		return nil
	}
	fmt.Fprintf(a.stdout, "forgot %s (%s); recorded in session %s\n", entries(n), sel, done.ID())
	for _, u := range uris {
		fmt.Fprintf(a.stdout, "  %s\n", u)
	}
	return nil
}
