package cli

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/openrath/rath"
	"github.com/openrath/rath/auth"
	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/cluster/clusterapi"
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
	var input, from string
	var quiet bool
	var argFlags []string
	c := &cobra.Command{
		Use:   "run [NAME]",
		Short: "Run a registered workflow on the store and report its outcome (no NAME: lists the workflows)",
		Long: `Run a registered workflow durably on the store and report its outcome: the answer, the steps and
tool calls it took, its usage, where its tools ran, its session id and what to look at next
(--json: the same as JSON; --quiet: the output session id alone).
Progress on stderr names the run's id, which "rath resume ID" takes if the run is cut short;
on a terminal it counts the run's steps, tool calls and tokens as they are committed.

--input gives the run its input (TEXT, @FILE or - for stdin); --arg k=v gives it a parameter
the workflow declares ("rath run" lists them); both are recorded on the run.
--from ID runs the workflow on a fork of the stored session ID (another run's
session, or one imported from OpenRath-Python) instead of on the workflow's own input.`,
		Args: cobra.MaximumNArgs(1),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			var names []string
			for _, w := range rath.Workflows() {
				names = append(names, w.Name+"\t"+w.Description)
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return a.listWorkflows()
			}
			name := args[0]
			var opts []rath.RunOption
			if cmd.Flags().Changed("input") {
				text, err := a.readInput(input)
				if err != nil {
					return err
				}
				opts = append(opts, rath.RunInput(text))
			}
			if cmd.Flags().Changed("arg") {
				kv, err := parseArgs(argFlags)
				if err != nil {
					return err
				}
				opts = append(opts, rath.RunArgs(kv))
			}
			if from != "" {
				id, err := sessionID(from)
				if err != nil {
					return err
				}
				opts = append(opts, rath.RunFrom(id))
			}
			rt, err := a.runtime(cmd.Context())
			if err != nil {
				return err
			}
			var run session.ID
			var p *progress
			live, stop := a.live(cmd.Context(), rt)
			opts = append(opts, rath.OnStart(func(id session.ID) {
				run, p = id, a.progressLive(fmt.Sprintf("run %s %s", name, id), live)
			}))
			opts = append(opts, a.stopOn(cmd.Context())...)
			out, err := rt.Run(cmd.Context(), name, opts...)
			stop()
			if p != nil {
				p.done(err)
			}
			if errors.Is(err, rath.ErrInterrupted) {
				return a.interrupted(cmd.Context(), run, err)
			}
			if errors.Is(err, rath.ErrUnknownWorkflow) {
				return usageErr("%s (registered: %s)", strings.TrimPrefix(err.Error(), "rath: "), workflowNames())
			}
			if errors.Is(err, rath.ErrTakesNoInput) || errors.Is(err, rath.ErrBadInput) || errors.Is(err, rath.ErrUnknownParam) || errors.Is(err, rath.ErrMissingParam) {
				return usageErr("%s", strings.TrimPrefix(err.Error(), "rath: "))
			}
			a.printRun(cmd.Context(), out, run, session.ID(from), name, quiet, err)
			return err
		},
	}
	c.Flags().StringVar(&input, "input", "", "the run's input: TEXT, @FILE or - for stdin (for a workflow that takes input)")
	c.Flags().StringVar(&from, "from", "", "run on a fork of this stored session instead of the workflow's own input")
	a.graceFlag(c)
	c.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only the output session id")
	c.Flags().StringArrayVar(&argFlags, "arg", nil, "a parameter of the workflow, k=v (repeatable; `rath run` lists each workflow's parameters)")
	return c
}

// printRun reports a run's outcome: the id alone with --quiet, JSON with
// --json, else what the run did and where to look further.
func (a *app) printRun(ctx context.Context, out *session.Session, run, from session.ID, workflow string, quiet bool, err error) {
	if out == nil {
		return
	}
	if quiet && !a.jsonOut {
		fmt.Fprintln(a.stdout, out.ID())
		return
	}
	n := 0
	if a.rt != nil {
		n = a.inputLen(ctx, a.rt, run)
	}
	o := newOutcome(out, run, from, workflow, n, err)
	if a.jsonOut {
		a.printJSON(o)
		return
	}
	o.print(a.stdout, a.self())
}

// listWorkflows prints the registered workflows.
func (a *app) listWorkflows() error {
	ws := rath.Workflows()
	if a.jsonOut {
		type param struct {
			Name        string `json:"name"`
			Description string `json:"description,omitempty"`
			Required    bool   `json:"required"`
			Default     string `json:"default,omitempty"`
		}
		type wf struct {
			Name        string  `json:"name"`
			Description string  `json:"description"`
			TakesInput  bool    `json:"takes_input"`
			Params      []param `json:"params"`
		}
		out := make([]wf, 0, len(ws))
		for _, w := range ws {
			ps := make([]param, 0, len(w.Params))
			for _, p := range w.Params {
				ps = append(ps, param{p.Name, p.Description, p.Required, p.Default})
			}
			out = append(out, wf{w.Name, w.Description, w.TakesInput, ps})
		}
		return a.printJSON(out)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKFLOW\tINPUT\tPARAMS\tDESCRIPTION")
	for _, w := range ws {
		in := "-"
		if w.TakesInput {
			in = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", w.Name, in, paramsList(w.Params), w.Description)
	}
	return tw.Flush()
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
			// Revoked tokens are closed sessions: a store of before seals
			// gets its seal first, or it would forget it has had tokens.
			if err := auth.NewTokens(rt.Store).EnsureSeal(cmd.Context()); err != nil {
				return err
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
	var addr, token, oidcIssuer, oidcAudience string
	var noCluster, withWorker bool
	var maxQueued int
	var minSchedule time.Duration
	var webhookAllow, secretRoots []string
	var webhookKey string
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve the HTTP API and the web viewer (on loopback by default; elsewhere every request needs a token)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rt, err := a.runtime(cmd.Context())
			if err != nil {
				return err
			}
			if withWorker && noCluster {
				return usageErr("--worker needs the cluster (drop --no-cluster)")
			}
			o := server.Options{Addr: addr, Token: token, MaxQueuedRuns: maxQueued, Tokens: auth.NewTokens(rt.Store)}
			if (oidcIssuer == "") != (oidcAudience == "") {
				return usageErr("--oidc-issuer and --oidc-audience go together")
			}
			if oidcIssuer != "" {
				oidc, err := auth.NewOIDC(cmd.Context(), auth.OIDCConfig{Issuer: oidcIssuer, Audience: oidcAudience})
				if err != nil {
					return err
				}
				o.Authenticators = append(o.Authenticators, oidc)
			}
			alog := a.alog
			o.Audit = alog
			var work chan error // the in-process worker's end, with --worker
			var stopWork context.CancelFunc
			if !noCluster {
				copts := cluster.Options{Audit: alog, MinScheduleInterval: minSchedule,
					WebhookAllow: webhookAllow, SecretRoots: secretRoots, WebhookKeyFile: webhookKey}
				if withWorker {
					copts.Log, copts.Deltas = a.stderr, true
				}
				cl, err := cluster.Open(cmd.Context(), rt, copts)
				if err != nil {
					return fmt.Errorf("%w (serve without the cluster page: --no-cluster)", err)
				}
				defer cl.Close()
				o.Cluster, o.Runs = clusterPage{cl}, clusterapi.New(cl)
				o.Collectors = append(o.Collectors, cl.Collector())
				if withWorker {
					m := cluster.NewStepMetrics()
					w, err := cl.NewWorker(cmd.Context(), cluster.WorkerOptions{Metrics: m})
					if err != nil {
						return err
					}
					defer w.Close()
					o.Collectors = append(o.Collectors, m.Collectors()...)
					wctx, stop := context.WithCancel(cmd.Context())
					defer stop()
					work, stopWork = make(chan error, 1), stop
					go func() { work <- w.Run(wctx) }()
				}
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
			if loop, _ := server.LoopbackAddr(addr); !loop && token == "" && oidcIssuer == "" {
				// Off loopback every request needs a credential: with none
				// to check, the server could answer nobody.
				some, err := o.Tokens.Any(cmd.Context())
				if err != nil {
					return err
				}
				if !some {
					return fmt.Errorf("%w: %s is not loopback, every request there needs one, and the store holds none (rath token create), nor is there --token or --oidc-issuer", server.ErrNoToken, addr)
				}
			}
			fmt.Fprintf(a.stderr, "serving %s on http://%s\n", rt.StoreURL, addr)
			err = srv.ListenAndServe(cmd.Context())
			if work != nil {
				// The worker drains as the server stops.
				stopWork()
				if werr := <-work; err == nil {
					err = werr
				}
			}
			return err
		},
	}
	c.Flags().StringVar(&addr, "addr", "127.0.0.1:7474", "address to listen on")
	c.Flags().StringVar(&token, "token", "", "a bearer token of the server's own, acting as an administrator (a non-loopback address needs it, the store's tokens or --oidc-issuer)")
	c.Flags().BoolVar(&noCluster, "no-cluster", false, "serve without the cluster page and API")
	c.Flags().BoolVar(&withWorker, "worker", false, "also work the cluster's runs in this process (a worker with the default options; its metrics join /metrics)")
	c.Flags().IntVar(&maxQueued, "max-queued", server.DefaultMaxQueuedRuns, "runs that may wait to be worked before POST /v1/runs answers 429")
	c.Flags().DurationVar(&minSchedule, "min-schedule-interval", cluster.DefaultMinScheduleInterval, "the shortest time between two ticks of a schedule added over /v1 (a schedule fires a run on each)")
	c.Flags().StringVar(&oidcIssuer, "oidc-issuer", "", "also accept OIDC/JWT bearer tokens from this issuer (claims tenant, project, grants: docs/auth.md)")
	c.Flags().StringVar(&oidcAudience, "oidc-audience", "", "the audience OIDC tokens must name (with --oidc-issuer)")
	c.Flags().StringSliceVar(&webhookAllow, "webhook-allow", nil, webhookAllowUsage)
	c.Flags().StringArrayVar(&secretRoots, "secret-root", nil, secretRootUsage)
	c.Flags().StringVar(&webhookKey, "webhook-key-file", "", webhookKeyUsage)
	return c
}
