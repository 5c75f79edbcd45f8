package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"github.com/openrath/rath"
	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// clusterFlags are the cluster's tuning flags, shared by its commands.
type clusterFlags struct {
	opts cluster.Options
}

func (f *clusterFlags) add(c *cobra.Command) {
	c.Flags().IntVar(&f.opts.SliceSteps, "slice-steps", 0, "live model calls a job works before handing its run back (default 8)")
	c.Flags().DurationVar(&f.opts.SliceTime, "slice-time", 0, "time a job works before handing its run back (default 10s)")
	c.Flags().DurationVar(&f.opts.Heartbeat, "heartbeat", 0, "how often a worker says it is alive (default 1s)")
	c.Flags().DurationVar(&f.opts.DeadAfter, "dead-after", 0, "silence after which a worker is taken for dead (default 10s)")
	c.Flags().StringVar(&f.opts.Host, "host", "", "the name of this machine as the cluster knows it (default the hostname; set it where hostnames are not unique)")
	c.Flags().DurationVar(&f.opts.Poll, "poll", 0, "how often workers look for jobs on SQLite (default 100ms)")
	c.Flags().BoolVar(&f.opts.Deltas, "deltas", false, "publish runs' streamed model text to run event streams (across processes on PostgreSQL)")
	c.Flags().DurationVar(&f.opts.WebhookBackoff, "webhook-backoff", 0, "wait before a failed webhook delivery's first retry, doubling up to 10m (default 5s)")
	c.Flags().StringSliceVar(&f.opts.WebhookAllow, "webhook-allow", nil, webhookAllowUsage)
	c.Flags().StringArrayVar(&f.opts.SecretRoots, "secret-root", nil, secretRootUsage)
	c.Flags().StringVar(&f.opts.WebhookKeyFile, "webhook-key-file", "", webhookKeyUsage)
}

// webhookAllowUsage describes --webhook-allow, of the commands that
// deliver webhooks.
const webhookAllowUsage = "also deliver webhooks to this CIDR, address, host name or domain suffix (.corp.example), repeatable; by default deliveries reach public addresses only"

// secretRootUsage describes --secret-root, of the commands that add
// webhooks over /v1 or deliver them.
const secretRootUsage = "grant a tenant (or one of its projects) the secret references its webhooks may be signed with: TENANT[/PROJECT]=secret://file/DIR or =secret://env/PREFIX, repeatable; by default a tenant may name none"

// webhookKeyUsage describes --webhook-key-file.
const webhookKeyUsage = "the key webhooks' signing keys are sealed with in the store, created 0600 if missing; every process adding or delivering webhooks needs the same (default webhook.key in the home)"

// cluster opens the cluster on the runtime's store.
func (a *app) cluster(ctx context.Context, o cluster.Options) (*cluster.Cluster, error) {
	rt, err := a.runtime(ctx)
	if err != nil {
		return nil, err
	}
	if o.Audit == nil {
		o.Audit = a.alog // quota and policy decisions are audited
	}
	return cluster.Open(ctx, rt, o)
}

// onRun checks a run id argument and opens the cluster (ops).
func (a *app) onRun(ctx context.Context, arg string) (session.ID, clusterOps, error) {
	id, err := sessionID(arg)
	if err != nil {
		return "", nil, err
	}
	cl, err := a.ops(ctx)
	return id, cl, err
}

// onRunCmd is a command on one run: it checks the id, opens the cluster
// and calls run.
func (a *app) onRunCmd(use, short string, run func(ctx context.Context, cl clusterOps, id session.ID) error) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, cl, err := a.onRun(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer cl.Close()
			return run(cmd.Context(), cl, id)
		},
	}
}

// readInput reads --input: TEXT, @FILE or - (stdin).
func (a *app) readInput(arg string) (string, error) {
	switch {
	case arg == "-":
		b, err := io.ReadAll(a.stdin)
		if err != nil {
			return "", fmt.Errorf("--input -: %w", err)
		}
		return string(b), nil
	case strings.HasPrefix(arg, "@"):
		b, err := os.ReadFile(arg[1:])
		if err != nil {
			return "", usageErr("--input %s: %v", arg, err)
		}
		return string(b), nil
	}
	return arg, nil
}

func whoAmI() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "unknown"
}

func (a *app) submitCmd() *cobra.Command {
	var input, key, on string
	var needs []string
	var wait bool
	c := &cobra.Command{
		Use:   "submit NAME",
		Short: "Enqueue a run of a registered workflow for the cluster; prints its id at once",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			n, err := cluster.ParsePairs(needs)
			if err != nil {
				return usageErr("--needs: %v", err)
			}
			o := cluster.SubmitOptions{Needs: n, Key: key}
			if cmd.Flags().Changed("session") {
				if o.Session, err = sessionID(on); err != nil {
					return usageErr("--session: %q is not a session id", on)
				}
			}
			if cmd.Flags().Changed("idempotency-key") {
				if err := cluster.CheckKey(key); err != nil {
					return usageErr("--idempotency-key: %v", err)
				}
			}
			if cmd.Flags().Changed("input") {
				text, err := a.readInput(input)
				if err != nil {
					return err
				}
				o.Input = &text
			}
			if _, err := rath.LookupWorkflow(args[0]); err != nil && !a.remote() {
				return usageErr("%v (registered: %s)", err, workflowNames())
			}
			cl, err := a.ops(ctx)
			if err != nil {
				return err
			}
			defer cl.Close()
			id, err := cl.Submit(ctx, args[0], o)
			if errors.Is(err, cluster.ErrNoInput) || errors.Is(err, cluster.ErrKeyReused) {
				return usageErr("%v", err)
			}
			if err != nil {
				return err
			}
			if !wait {
				if a.jsonOut {
					return a.printJSON(map[string]any{"id": id})
				}
				fmt.Fprintln(a.stdout, id)
				return nil
			}
			if !a.jsonOut {
				fmt.Fprintln(a.stdout, id)
			}
			return a.follow(ctx, cl, id)
		},
	}
	c.Flags().StringVar(&input, "input", "", "the run's input: TEXT, @FILE or - for stdin")
	c.Flags().StringSliceVar(&needs, "needs", nil, "what the run needs of its worker: k=v (gpu=1, region=eu, sandbox=docker)")
	c.Flags().BoolVar(&wait, "wait", false, "follow the run to its end")
	c.Flags().StringVar(&key, "idempotency-key", "", "submit at most once under this key: the same key and run give the same id back")
	c.Flags().StringVar(&on, "session", "", "continue this session: the run starts from where its last run on it ended, and waits behind one still going")
	return c
}

func workflowNames() string {
	var names []string
	for _, w := range rath.Workflows() {
		names = append(names, w.Name)
	}
	return strings.Join(names, ", ")
}

// follow prints a run's progress until it ends: exit 0 done, 1 otherwise.
func (a *app) follow(ctx context.Context, cl clusterOps, id session.ID) error {
	seen := 0
	last := cluster.State("")
	start := time.Now()
	for {
		run, history, err := cl.RunStatus(ctx, id)
		if err != nil {
			return err
		}
		for ; seen < len(history); seen++ {
			if d := history[seen].Decision; d != nil {
				fmt.Fprintf(a.stderr, "%s  %s\n", time.Since(start).Round(100*time.Millisecond), d.Reason)
			} else if n := history[seen].Note; n != nil {
				fmt.Fprintf(a.stderr, "%s  %s\n", time.Since(start).Round(100*time.Millisecond), n.Text)
			}
		}
		if run.State != last {
			last = run.State
			line := string(run.State)
			switch run.State {
			case cluster.StateRunning:
				line += " on " + run.Worker
			case cluster.StateWaitingApproval:
				line += fmt.Sprintf(" (rath approve %s [--deny])", id)
			case cluster.StateNeedsReview:
				line += fmt.Sprintf(" (rath review %s --happened|--not-happened|--abort)", id)
			case cluster.StateUnroutable, cluster.StateBehind:
				line += ": " + run.Why
			}
			fmt.Fprintf(a.stderr, "%s  %s\n", time.Since(start).Round(100*time.Millisecond), line)
		}
		switch run.State {
		case cluster.StateDone:
			if a.jsonOut {
				return a.printJSON(run)
			}
			fmt.Fprintf(a.stderr, "done: output %s\n", run.Output)
			return nil
		case cluster.StateFailed, cluster.StateCancelled:
			if a.jsonOut {
				a.printJSON(run)
			}
			return fmt.Errorf("run %s %s: %s", id, run.State, firstNonEmpty(run.Error, run.Cancel))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func (a *app) workerCmd() *cobra.Command {
	var f clusterFlags
	var o cluster.WorkerOptions
	var offers []string
	var health string
	c := &cobra.Command{
		Use:   "worker",
		Short: "Work the cluster's runs until SIGTERM (then drain and exit 0)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			var err error
			if o.Offers, err = cluster.ParsePairs(offers); err != nil {
				return usageErr("--offers: %v", err)
			}
			for _, n := range o.Workflows {
				if _, err := rath.LookupWorkflow(n); err != nil {
					return usageErr("--queues: %v (registered: %s)", err, workflowNames())
				}
			}
			f.opts.Log = a.stderr
			cl, err := a.openClusterRetrying(ctx, f.opts)
			if err != nil {
				return err
			}
			defer cl.Close()
			o.Metrics = cluster.NewStepMetrics()
			w, err := cl.NewWorker(ctx, o)
			if err != nil {
				return err
			}
			defer w.Close()
			ln, err := net.Listen("tcp", health)
			if err != nil {
				return fmt.Errorf("--health %s: %w", health, err)
			}
			mux := http.NewServeMux()
			mux.Handle("/health/", cluster.Health(cl.Runtime().Store, w.Ready))
			mux.Handle("/metrics", workerMetrics(o.Metrics))
			if os.Getenv("RATH_PPROF") != "" {
				// Profiles of a busy worker, on the loopback health address.
				mux.HandleFunc("/debug/pprof/", pprof.Index)
				mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
			}
			srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
			go srv.Serve(ln)
			defer srv.Close()
			info := w.Info()
			fmt.Fprintf(a.stderr, "worker %s: pool %s, health on http://%s/health/ready, metrics on /metrics, store %s\n", info.ID, info.Pool, ln.Addr(), store.Redact(cl.Runtime().StoreURL))
			if m, err := cl.Runtime().Memory(ctx); err != nil {
				fmt.Fprintf(a.stderr, "worker %s: memory %s cannot be opened (%v); runs that use memory will fail\n", info.ID, store.Redact(cl.Runtime().MemoryURL), err)
			} else {
				fmt.Fprintf(a.stderr, "worker %s: memory %s\n", info.ID, memory.Describe(m))
			}
			return w.Run(ctx)
		},
	}
	f.add(c)
	c.Flags().StringVar(&o.ID, "id", "", "the worker's name (default host-pid)")
	c.Flags().IntVar(&o.Concurrency, "concurrency", 16, "runs worked at once")
	c.Flags().StringSliceVar(&offers, "offers", nil, "what it offers runs' needs: k=v, alternatives with | (sandbox=bwrap|docker)")
	c.Flags().StringSliceVar(&o.Workflows, "queues", nil, "the workflows it serves (default every registered one)")
	c.Flags().StringVar(&health, "health", "127.0.0.1:0", "address of /health/live and /health/ready")
	return c
}

// openClusterRetrying opens the cluster, retrying with backoff while the
// store is unreachable (saying so), until ctx ends.
func (a *app) openClusterRetrying(ctx context.Context, o cluster.Options) (*cluster.Cluster, error) {
	delay := 250 * time.Millisecond
	for {
		cl, err := a.cluster(ctx, o)
		if err == nil {
			return cl, nil
		}
		if a.rt != nil || ctx.Err() != nil || !unreachable(err) {
			return nil, err
		}
		fmt.Fprintf(a.stderr, "store unreachable (%v); retrying in %s\n", err, delay)
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(delay):
		}
		delay = min(delay*2, 5*time.Second)
	}
}

func unreachable(err error) bool {
	s := err.Error()
	return strings.Contains(s, "connect") || strings.Contains(s, "refused") || strings.Contains(s, "dial")
}

func (a *app) statusCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "status [ID]",
		Short: "The cluster: workers, pools and queue depths, runs and their states (or one run and its history)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			cl, err := a.ops(ctx)
			if err != nil {
				return err
			}
			defer cl.Close()
			if len(args) == 1 {
				id, err := sessionID(args[0])
				if err != nil {
					return err
				}
				run, history, err := cl.RunStatus(ctx, id)
				if err != nil {
					return err
				}
				if a.jsonOut {
					return a.printJSON(map[string]any{"run": run, "history": history})
				}
				printRun(a.stdout, run)
				for _, ch := range history {
					fmt.Fprintf(a.stdout, "  %s  %s\n", ch.Time.Format(time.RFC3339), historyLine(ch))
				}
				return nil
			}
			rep, err := cl.Report(ctx, 0)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(rep)
			}
			printReport(a.stdout, rep)
			return nil
		},
	}
}

func historyLine(ch session.Chunk) string {
	switch {
	case ch.Decision != nil:
		return ch.Decision.Selector + ": " + ch.Decision.Reason
	case ch.Note != nil:
		return ch.Note.Text
	}
	return ch.Kind.String()
}

func printRun(w io.Writer, r *cluster.Run) {
	fmt.Fprintf(w, "run %s  workflow %s  %s", r.ID, r.Workflow, runState(r))
	fmt.Fprintln(w)
	if r.Pool != "" || r.Why != "" {
		fmt.Fprintf(w, "  pool %s: %s\n", orDash(r.Pool), r.Why)
	}
	if r.Revision != "" {
		fmt.Fprintf(w, "  revision %s, %d slice(s), epoch %d\n", r.Revision, r.Slices, r.Epoch)
	}
	switch {
	case r.Pinned != "":
		fmt.Fprintf(w, "  pinned: %s\n", r.Pinned)
	case r.Placed != "":
		fmt.Fprintf(w, "  placed on the %s sandbox, which lives off any one host: the run is pinned to no host\n", r.Placed)
	}
	if r.Output != "" {
		fmt.Fprintf(w, "  output %s\n", r.Output)
	}
	if r.Review != nil {
		fmt.Fprintf(w, "  needs review: %v\n", r.Review)
	}
	for _, h := range r.Previous {
		fmt.Fprintf(w, "  previous holder: %s\n", h)
	}
	if r.Error != "" {
		fmt.Fprintf(w, "  error: %s\n", r.Error)
	}
}

func runState(r *cluster.Run) string {
	s := string(r.State)
	switch r.State {
	case cluster.StateRunning:
		s += " on " + r.Worker + " since " + r.Since.Format(time.RFC3339)
	case cluster.StateCancelling:
		s += " (asked by " + r.Cancel + ")"
	}
	return s
}

func printReport(w io.Writer, rep *cluster.Report) {
	fmt.Fprintln(w, "WORKERS")
	for _, wk := range rep.Workers {
		state := wk.State
		if !wk.Alive && wk.State != "stopped" {
			state = "dead: " + wk.Why
		}
		fmt.Fprintf(w, "  %-24s %-10s pool %s  host %s pid %d  beat %s  runs %d  %s\n", wk.ID, state, wk.Pool, wk.Host, wk.PID,
			wk.Beat.Format(time.TimeOnly), wk.Holding, offersText(wk.Offers))
	}
	fmt.Fprintln(w, "POOLS")
	for _, p := range rep.Pools {
		fmt.Fprintf(w, "  %-20s queued %-5d running %-5d workers %d  %s\n", p.Queue, p.Queued, p.Running, len(p.Workers), offersText(p.Offers))
	}
	fmt.Fprintln(w, "RUNS")
	for i := range rep.Runs {
		r := &rep.Runs[i]
		line := fmt.Sprintf("  %s  %-12s %s", r.ID, r.Workflow, runState(r))
		if r.State == cluster.StateUnroutable || r.State == cluster.StateBehind || (r.State == cluster.StateQueued && strings.HasPrefix(r.Why, "waiting")) {
			line += ": " + r.Why
		}
		if r.Pinned != "" && !r.State.Final() {
			line += " [pinned to " + r.Host + "]"
		}
		fmt.Fprintln(w, line)
	}
}

func offersText(o map[string]string) string {
	if len(o) == 0 {
		return ""
	}
	var parts []string
	for k, v := range o {
		parts = append(parts, k+"="+v)
	}
	return "offers " + strings.Join(parts, ",")
}

func (a *app) cancelCmd() *cobra.Command {
	var reason, by string
	c := a.onRunCmd("cancel ID", "Stop a run on whichever worker holds it",
		func(ctx context.Context, cl clusterOps, id session.ID) error {
			if err := cl.Cancel(ctx, id, by, reason); err != nil {
				return err
			}
			deadline := time.Now().Add(15 * time.Second)
			for {
				run, _, err := cl.RunStatus(ctx, id)
				if err != nil {
					return err
				}
				if run.State == cluster.StateCancelled {
					fmt.Fprintf(a.stderr, "cancelled %s\n", id)
					return nil
				}
				if run.State.Final() || time.Now().After(deadline) {
					return fmt.Errorf("run %s is %s (cancel asked; its worker has not stopped it yet)", id, run.State)
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	c.Flags().StringVar(&reason, "reason", "", "why")
	c.Flags().StringVar(&by, "by", whoAmI(), "who cancels")
	return c
}

func (a *app) approveCmd() *cobra.Command {
	var reason, by string
	var deny bool
	c := a.onRunCmd("approve ID", "Approve (or --deny) the approval a run waits for; the run continues on a worker",
		func(ctx context.Context, cl clusterOps, id session.ID) error {
			if err := cl.Approve(ctx, id, !deny, by, reason); err != nil {
				return err
			}
			verdict := "approved"
			if deny {
				verdict = "denied"
			}
			fmt.Fprintf(a.stderr, "%s %s\n", verdict, id)
			return nil
		})
	c.Flags().BoolVar(&deny, "deny", false, "reject instead of approving")
	c.Flags().StringVar(&reason, "reason", "", "why")
	c.Flags().StringVar(&by, "by", whoAmI(), "who decides")
	return c
}

func (a *app) pendingCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "pending",
		Short: "Runs waiting for a person: approvals and reviews",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			cl, err := a.ops(ctx)
			if err != nil {
				return err
			}
			defer cl.Close()
			runs, err := cl.Pending(ctx)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(runs)
			}
			for i := range runs {
				r := &runs[i]
				what := r.Error
				if r.Review != nil {
					what = r.Review.Error()
				}
				fmt.Fprintf(a.stdout, "%s  %-12s %-16s %s\n", r.ID, r.Workflow, r.State, what)
			}
			return nil
		},
	}
}

func (a *app) reviewCmd() *cobra.Command {
	var happened, notHappened, abort, quiet, force bool
	var result, call, reason, by string
	c := &cobra.Command{
		Use:   "review ID --happened [--result @FILE] | --not-happened [--force] | --abort",
		Short: "Settle a run waiting in needs_review: did the interrupted call's effect happen?",
		Long: `Settle a run waiting in needs_review: a call to a tool that is not idempotent was made when the
run stopped (its process was killed, or it was stopped past its grace period) and nobody knows
whether its effect happened. --happened takes it as done (--result gives what it returned);
--not-happened makes it again; --abort ends the run failed. A run started by "rath run" is then
resumed here; a cluster's run is continued by its workers.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			id, err := sessionID(args[0])
			if err != nil {
				return err
			}
			o := cluster.ReviewOptions{CallID: call, By: by, Reason: reason, Force: force}
			switch {
			case happened && !notHappened && !abort:
				o.Verdict = session.VerdictHappened
			case notHappened && !happened && !abort:
				o.Verdict = session.VerdictNotHappened
			case abort && !happened && !notHappened:
				o.Verdict = session.VerdictAborted
			default:
				return usageErr("give exactly one of --happened, --not-happened, --abort")
			}
			if force && !notHappened {
				return usageErr("--force goes with --not-happened")
			}
			if result != "" {
				if !happened {
					return usageErr("--result goes with --happened")
				}
				if o.Result, err = a.readInput(result); err != nil {
					return err
				}
			}
			if local, err := a.reviewLocal(ctx, id, o, quiet); local {
				return err
			}
			cl, err := a.ops(ctx)
			if err != nil {
				return err
			}
			defer cl.Close()
			if force {
				fmt.Fprintf(a.stderr, "warning: --force: %s is settled as not happened even if a worker that ran the call may still exist; if it does and finishes the call, its effect happens twice\n", id)
			}
			if err := cl.Review(ctx, id, o); err != nil {
				return err
			}
			fmt.Fprintf(a.stderr, "settled %s: %s\n", id, o.Verdict)
			return nil
		},
	}
	c.Flags().BoolVar(&happened, "happened", false, "the call's effect happened")
	c.Flags().BoolVar(&notHappened, "not-happened", false, "the call's effect did not happen: run it again")
	c.Flags().BoolVar(&abort, "abort", false, "end the run")
	c.Flags().BoolVar(&force, "force", false, "with --not-happened: settle even while a worker that ran the call may still exist (paused, say): its effect may then happen twice")
	c.Flags().StringVar(&result, "result", "", "what the call returned (TEXT, @FILE or -), with --happened")
	c.Flags().StringVar(&call, "call", "", "settle this call only (default: every unsettled call)")
	c.Flags().StringVar(&reason, "reason", "", "why")
	c.Flags().StringVar(&by, "by", whoAmI(), "who settles")
	c.Flags().BoolVarP(&quiet, "quiet", "q", false, "a run started by rath run: print only its output session id once resumed")
	return c
}

// showClusterRun adds to `rath show` of a cluster run where it went after
// it started and why: its state and its ledger.
func (a *app) showClusterRun(ctx context.Context, info store.Info) error {
	if info.Labels[cluster.LabelKind] != "run" {
		return nil
	}
	run, err := cluster.RunOf(info)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "\ncluster run: %s", runState(run))
	if run.Output != "" {
		fmt.Fprintf(a.stdout, ", output %s", run.Output)
	}
	fmt.Fprintln(a.stdout)
	if run.Ledger == "" {
		return nil
	}
	l, err := a.rt.Store.Load(ctx, run.Ledger)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "ledger %s:\n", run.Ledger)
	for i, c := range l.All() {
		if i > 0 {
			fmt.Fprintf(a.stdout, "  %s  %s\n", c.Time.Format(time.RFC3339), historyLine(c))
		}
	}
	return nil
}

// clusterPage is the server's view of the cluster (server cannot import
// cluster, which sits above it).
type clusterPage struct{ cl *cluster.Cluster }

// statusRuns caps the runs the cluster page shows (newest first).
const statusRuns = 500

func (p clusterPage) Status(ctx context.Context) (any, error) {
	return p.cl.Status(ctx, cluster.StatusOptions{Limit: statusRuns})
}

// workerMetrics serves a worker's metrics in the Prometheus text format:
// what its runs commit (m), and the Go runtime's and the process's.
func workerMetrics(m *cluster.StepMetrics) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(append(m.Collectors(), collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))...)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
}
