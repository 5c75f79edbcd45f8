package main

import (
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/openrath/rath"
	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/server"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

func (a *app) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			v, goV := "(devel)", ""
			if bi, ok := debug.ReadBuildInfo(); ok {
				goV = bi.GoVersion
				if bi.Main.Version != "" {
					v = bi.Main.Version
				}
				for _, s := range bi.Settings {
					if s.Key == "vcs.revision" && len(s.Value) >= 12 {
						v += " " + s.Value[:12]
					}
				}
			}
			if a.jsonOut {
				return a.printJSON(map[string]string{"version": v, "go": goV})
			}
			fmt.Fprintf(a.stdout, "rath %s %s\n", v, goV)
			return nil
		},
	}
}

func (a *app) runCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "run NAME",
		Short: "Run a registered workflow on the store; prints the output session id",
		Args:  cobra.ExactArgs(1),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			var names []string
			for _, w := range rath.Workflows() {
				names = append(names, w.Name+"\t"+w.Description)
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			rt, err := a.runtime(cmd.Context())
			if err != nil {
				return err
			}
			p := a.progress("run " + args[0])
			out, err := rt.Run(cmd.Context(), args[0])
			p.done(err)
			if errors.Is(err, rath.ErrUnknownWorkflow) {
				var names []string
				for _, w := range rath.Workflows() {
					names = append(names, w.Name)
				}
				return usageErr("%v (registered: %v)", err, names)
			}
			if out != nil {
				if a.jsonOut {
					a.printJSON(map[string]any{"id": out.ID(), "chunks": out.Len(), "usage": out.Usage(), "ok": err == nil})
				} else {
					fmt.Fprintln(a.stdout, out.ID())
				}
			}
			return err
		},
	}
}

func (a *app) verifyCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "verify [ID]",
		Short: "Verify hash chains against stored bytes (one session, or all); exit 1 on any broken chain",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rt, err := a.runtime(cmd.Context())
			if err != nil {
				return err
			}
			var ids []session.ID
			if len(args) == 1 {
				id, err := sessionID(args[0])
				if err != nil {
					return err
				}
				ids = []session.ID{id}
			} else {
				infos, err := rt.Store.List(cmd.Context(), store.Filter{})
				if err != nil {
					return err
				}
				for _, i := range infos {
					ids = append(ids, i.ID)
				}
			}
			type result struct {
				ID    session.ID `json:"id"`
				OK    bool       `json:"ok"`
				Error string     `json:"error,omitempty"`
			}
			var results []result
			bad := 0
			p := a.progress(fmt.Sprintf("verify %d sessions", len(ids)))
			for _, id := range ids {
				r := result{ID: id, OK: true}
				if err := rt.Store.Verify(cmd.Context(), id); err != nil {
					r.OK, r.Error = false, err.Error()
					bad++
				}
				results = append(results, r)
				if !a.jsonOut {
					if r.OK {
						fmt.Fprintf(a.stdout, "ok      %s\n", id)
					} else {
						fmt.Fprintf(a.stdout, "BROKEN  %s: %s\n", id, r.Error)
					}
				}
			}
			p.done(nil)
			if a.jsonOut {
				if results == nil {
					results = []result{}
				}
				a.printJSON(results)
			}
			if bad > 0 {
				return fmt.Errorf("%d of %d sessions failed verification", bad, len(ids))
			}
			return nil
		},
	}
}

func (a *app) gcCmd() *cobra.Command {
	var older string
	var dry bool
	c := &cobra.Command{
		Use:   "gc --older-than DUR",
		Short: "Delete closed, archived and failed sessions older than DUR (chunks a survivor needs are kept)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if older == "" {
				return usageErr("gc needs --older-than, such as 720h")
			}
			d, err := time.ParseDuration(older)
			if err != nil || d < 0 {
				return usageErr("--older-than %q is not a duration such as 720h", older)
			}
			rt, err := a.runtime(cmd.Context())
			if err != nil {
				return err
			}
			if dry {
				infos, err := rt.Store.List(cmd.Context(), store.Filter{Status: store.GCStatuses(), Until: time.Now().Add(-d)})
				if err != nil {
					return err
				}
				if a.jsonOut {
					return a.printJSON(map[string]any{"dry_run": true, "sessions": len(infos)})
				}
				for _, i := range infos {
					fmt.Fprintf(a.stdout, "would delete %s (%s, %d chunks)\n", i.ID, i.Status, i.Len)
				}
				fmt.Fprintf(a.stdout, "%d sessions would be deleted\n", len(infos))
				return nil
			}
			p := a.progress("gc")
			stats, err := rt.Store.GC(cmd.Context(), d)
			p.done(err)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(stats)
			}
			fmt.Fprintf(a.stdout, "deleted %d sessions, %d chunks\n", stats.Sessions, stats.Chunks)
			return nil
		},
	}
	c.Flags().StringVar(&older, "older-than", "", "age of the sessions to delete, such as 720h")
	c.Flags().BoolVar(&dry, "dry-run", false, "only list what would be deleted")
	return c
}

func (a *app) serveCmd() *cobra.Command {
	var addr, token string
	var noCluster bool
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve the HTTP API and the web viewer (loopback unless --token is given)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rt, err := a.runtime(cmd.Context())
			if err != nil {
				return err
			}
			o := server.Options{Addr: addr, Token: token}
			if !noCluster {
				cl, err := cluster.Open(cmd.Context(), rt, cluster.Options{})
				if err != nil {
					return fmt.Errorf("%w (serve without the cluster page: --no-cluster)", err)
				}
				defer cl.Close()
				o.Cluster = clusterPage{cl}
				if token == "" {
					if o.RiverUI, err = cl.RiverUI(cmd.Context(), "/river"); err != nil {
						return err
					}
				}
			}
			srv, err := server.New(rt.Store, o)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stderr, "serving %s on http://%s\n", rt.StoreURL, addr)
			return srv.ListenAndServe(cmd.Context())
		},
	}
	c.Flags().StringVar(&addr, "addr", "127.0.0.1:7474", "address to listen on")
	c.Flags().StringVar(&token, "token", "", "bearer token required by the API (needed for a non-loopback address)")
	c.Flags().BoolVar(&noCluster, "no-cluster", false, "serve without the cluster page and API")
	return c
}
