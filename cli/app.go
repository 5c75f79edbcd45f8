package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/openrath/rath"
	"github.com/openrath/rath/audit"
)

// Exit codes.
const (
	exitOK       = 0
	exitError    = 1
	exitUsage    = 2
	exitDiverged = 3
)

// exitError carries a specific exit code with its message.
type codeError struct {
	code int
	err  error
}

func (e *codeError) Error() string { return e.err.Error() }
func (e *codeError) Unwrap() error { return e.err }

func usageErr(format string, a ...any) error {
	return &codeError{code: exitUsage, err: fmt.Errorf(format, a...)}
}

// app holds the global flags and streams of one invocation.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	home, storeURL string
	memoryURL      string
	jsonOut        bool
	grace          time.Duration // rath run and resume: how long a stopping run waits for its tool calls
	// serverURL and serverToken, if set, send the cluster's commands to
	// an Agent Server (--server, --server-token).
	serverURL, serverToken string
	root                   *cobra.Command
	rt                     *rath.Runtime
	// alog is the store's audit log as this process writes it (one lane),
	// opened with the runtime (auditlog.go).
	alog *audit.Log
	name string // the program's name, in messages
	// isTerminal, if set, replaces the check of whether a stream is a
	// terminal (tests).
	isTerminal func(io.Writer) bool

	// auditWitness is alog's witness file (--audit-witness).
	auditWitness string
}

func newApp(stdin io.Reader, stdout, stderr io.Writer, o options) *app {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, name: o.name, isTerminal: o.isTerminal}
	root := &cobra.Command{
		Use:           o.name,
		Short:         o.short,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.PersistentFlags().StringVar(&a.home, "home", "", "runtime home directory (env RATH_HOME, default ./.rath)")
	root.PersistentFlags().StringVar(&a.storeURL, "store", "", "store URL: sqlite:///path/to.db (default under the home) or postgres://...")
	root.PersistentFlags().StringVar(&a.memoryURL, "memory", "", "long-term memory URL: sqlite:///path or postgres://... (default: the store's PostgreSQL database, else <home>/memory.db; env RATH_MEMORY)")
	root.PersistentFlags().BoolVar(&a.jsonOut, "json", false, "machine-readable JSON output")
	root.PersistentFlags().StringVar(&a.serverURL, "server", "", "drive the cluster of this Agent Server (http://host:7474; env RATH_SERVER) with submit, status, cancel, approve, pending and review")
	root.PersistentFlags().StringVar(&a.serverToken, "server-token", "", "the --server's bearer token (env RATH_SERVER_TOKEN)")
	a.auditFlags(root)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageErr("%v", err) })
	root.AddCommand(a.versionCmd(), a.configCmd(), a.runCmd(), a.lsCmd(), a.showCmd(), a.graphCmd(), a.exportCmd(),
		a.importCmd(), a.forkCmd(), a.mergeCmd(), a.replayCmd(), a.resumeCmd(), a.verifyCmd(), a.gcCmd(), a.serveCmd(),
		a.submitCmd(), a.workerCmd(), a.statusCmd(), a.cancelCmd(), a.approveCmd(), a.pendingCmd(), a.reviewCmd(), a.sandboxesCmd(),
		a.memoryCmd(), a.doctorCmd())
	root.AddCommand(a.scheduleCmd())
	root.AddCommand(a.webhooksCmd())
	root.AddCommand(a.auditCmd())
	root.AddCommand(a.tokenCmd())
	root.AddCommand(a.quotaCmd())
	for _, add := range o.commands {
		root.AddCommand(add(Env{a}))
	}
	a.root = root
	return a
}

func (a *app) execute(ctx context.Context, args []string) int {
	a.root.SetArgs(args)
	err := a.root.ExecuteContext(ctx)
	if a.rt != nil {
		if cerr := a.rt.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	if err == nil {
		return exitOK
	}
	code := exitError
	var ce *codeError
	if errors.As(err, &ce) {
		code = ce.code
	} else if isUsage(err) {
		code = exitUsage
	}
	fmt.Fprintln(a.stderr, a.name+": "+sentence(err))
	return code
}

// isUsage recognises cobra's own argument errors.
func isUsage(err error) bool {
	s := err.Error()
	return strings.HasPrefix(s, "unknown command") || strings.HasPrefix(s, "accepts ") || strings.HasPrefix(s, "requires ") ||
		strings.HasPrefix(s, "unknown flag") || strings.Contains(s, "flag needs an argument") || strings.HasPrefix(s, "invalid argument")
}

// sentence makes an error one line.
func sentence(err error) string {
	// The runtime's errors start with its package's name, which the
	// command line's own "rath: " replaces.
	s := strings.TrimPrefix(strings.TrimSpace(err.Error()), "rath: ")
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		first, rest := s[:i], strings.TrimSpace(s[i+1:])
		if rest != "" {
			return first + "\n" + rest // details (a diff) follow the sentence
		}
		return first
	}
	return s
}

// runtime opens the runtime once per invocation.
func (a *app) runtime(ctx context.Context) (*rath.Runtime, error) {
	if a.rt != nil {
		return a.rt, nil
	}
	if a.home != "" {
		// Sandbox workspaces and model config live under the home too.
		os.Setenv("RATH_HOME", a.home)
	}
	mem, err := a.memoryChoice()
	if err != nil {
		return nil, err
	}
	// A worker says what it opened in its own words; the runtime's
	// warnings (a policy file that does not load) go to stderr.
	rt, err := rath.Open(ctx, rath.Config{Home: a.home, Store: a.storeURL, Memory: mem,
		Logger: slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		return nil, err
	}
	a.rt = rt
	if err := a.openAudit(ctx, rt); err != nil {
		rt.Close()
		a.rt = nil
		return nil, err
	}
	return rt, nil
}

// printJSON writes v as indented JSON.
func (a *app) printJSON(v any) error {
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
