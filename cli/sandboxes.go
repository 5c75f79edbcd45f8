package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/store"
)

// listedSandbox is a remote sandbox rath created, and whether it is an
// orphan: its creating process is gone and no live cluster run holds it.
type listedSandbox struct {
	sandbox.Listed
	Orphan bool   `json:"orphan"`
	Why    string `json:"why"`
}

func (a *app) sandboxesCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "sandboxes",
		Short: "List and collect the remote sandboxes (e2b, cube, opensandbox) rath created",
	}
	var backend string
	ls := &cobra.Command{
		Use:   "ls",
		Short: "List the remote sandboxes rath created, marking orphans",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			all, err := a.remoteSandboxes(cmd.Context(), backend)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(all)
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "BACKEND\tID\tSTATE\tSESSION\tCREATED BY\tENDS\tORPHAN")
			for _, s := range all {
				orphan := "no"
				if s.Orphan {
					orphan = "yes"
				}
				ends := "-"
				if !s.Ends.IsZero() {
					ends = s.Ends.Local().Format(time.DateTime)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s:%d\t%s\t%s (%s)\n", s.Backend, s.ID, s.State, orDash(s.Session), orDash(s.Host), s.PID, ends, orphan, s.Why)
			}
			return tw.Flush()
		},
	}
	var everything, dry bool
	gc := &cobra.Command{
		Use:   "gc [--all] [--dry-run]",
		Short: "Kill the remote sandboxes a crashed rath process left behind (--all: every one rath created)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			all, err := a.remoteSandboxes(cmd.Context(), backend)
			if err != nil {
				return err
			}
			var killed []listedSandbox
			var errs []error
			for _, s := range all {
				if !s.Orphan && !everything {
					continue
				}
				if !dry {
					pr, _ := sandbox.ProviderOf(s.Backend) // listed: it is one
					if err := pr.Kill(cmd.Context(), s.ID); err != nil && !errors.Is(err, sandbox.ErrNotFound) {
						errs = append(errs, fmt.Errorf("%s sandbox %s: %w", s.Backend, s.ID, err))
						continue
					}
				}
				killed = append(killed, s)
			}
			if a.jsonOut {
				if err := a.printJSON(map[string]any{"dry_run": dry, "killed": killed}); err != nil {
					return err
				}
			} else {
				verb := "killed"
				if dry {
					verb = "would kill"
				}
				for _, s := range killed {
					fmt.Fprintf(a.stdout, "%s %s sandbox %s (%s)\n", verb, s.Backend, s.ID, s.Why)
				}
				fmt.Fprintf(a.stdout, "%d of %d sandboxes %s\n", len(killed), len(all), verb)
			}
			return errors.Join(errs...)
		},
	}
	gc.Flags().BoolVar(&everything, "all", false, "kill every sandbox rath created, orphan or not")
	gc.Flags().BoolVar(&dry, "dry-run", false, "only list what would be killed")
	c.PersistentFlags().StringVar(&backend, "backend", "", "only this backend (e2b, cube or opensandbox)")
	c.AddCommand(ls, gc)
	return c
}

// remoteSandboxes lists what every configured remote backend holds of
// rath's. A backend that is not configured here is skipped with a note.
func (a *app) remoteSandboxes(ctx context.Context, only string) ([]listedSandbox, error) {
	providers := map[string]sandbox.Provider{}
	for _, n := range sandbox.Backends() {
		if pr, _ := sandbox.ProviderOf(n); pr != nil && (only == "" || only == n) {
			providers[n] = pr
		}
	}
	if only != "" && len(providers) == 0 {
		return nil, usageErr("--backend %q is not a remote sandbox backend (registered: %v)", only, sandbox.Backends())
	}
	host, _ := os.Hostname()
	var out []listedSandbox
	for _, n := range slices.Sorted(maps.Keys(providers)) {
		listed, err := providers[n].List(ctx)
		if errors.Is(err, sandbox.ErrUnavailable) {
			if only != "" {
				return nil, err
			}
			fmt.Fprintf(a.stderr, "rath: skipping %s: %v\n", n, err)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("listing %s sandboxes: %w", n, err)
		}
		for _, l := range listed {
			out = append(out, a.judge(ctx, l, host))
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Backend != out[j].Backend {
			return out[i].Backend < out[j].Backend
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// judge says whether a listed sandbox is an orphan: created by a process
// of this host that is gone, and not held by an unfinished cluster run.
func (a *app) judge(ctx context.Context, l sandbox.Listed, host string) listedSandbox {
	s := listedSandbox{Listed: l}
	if run := a.holdingRun(ctx, l); run != "" {
		s.Why = run
		return s
	}
	switch {
	case l.Host != host:
		s.Why = "created on host " + orDash(l.Host)
	case l.PID <= 0:
		s.Why = "no creating process recorded"
	case alive(l.PID):
		s.Why = fmt.Sprintf("process %d is alive", l.PID)
	default:
		s.Orphan, s.Why = true, fmt.Sprintf("process %d is gone", l.PID)
	}
	return s
}

// holdingRun names the unfinished cluster run a sandbox is recorded on in
// this store, or "".
func (a *app) holdingRun(ctx context.Context, l sandbox.Listed) string {
	rt, err := a.runtime(ctx)
	if err != nil {
		return ""
	}
	infos, err := rt.Store.List(ctx, store.Filter{Labels: map[string]string{cluster.LabelRemotePrefix + l.ID: l.Backend}})
	if err != nil {
		return ""
	}
	for _, info := range infos {
		if run, err := cluster.RunOf(info); err == nil && !run.State.Final() {
			return fmt.Sprintf("held by cluster run %s (%s)", info.ID, run.State)
		}
	}
	return ""
}

// alive reports whether a process of this host runs.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
