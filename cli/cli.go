// Package cli is the rath command line as a package: a program registers
// its workflows with rath.RegisterWorkflow and calls Main, and gets the
// whole command line — run, resume, replay, serve, worker, ls, show and
// the rest — over them.
//
//	func main() {
//		rath.RegisterWorkflow(rath.Workflow{Name: "triage", Build: triage})
//		cli.Main()
//	}
//
// Exit codes: 0 success; 1 an error (including a broken chain found by
// verify); 2 a usage error; 3 a replay that diverged from its record.
package cli

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/openrath/rath"
)

// Main runs the command line on the process's arguments and streams, and
// exits with its exit code. The first SIGINT or SIGTERM stops a run at
// its next safe point, leaving it interrupted and resumable, and cancels
// any other command (a worker drains); a second one exits at once.
func Main(opts ...Option) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	in := newInterrupt(cancel, os.Exit)
	go in.watch(sigs)
	code := Run(withInterrupt(ctx, in), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, opts...)
	signal.Stop(sigs)
	cancel()
	os.Exit(code)
}

// Run runs the command line with args (without the program's name) and
// returns the exit code. Errors are written to stderr as one sentence.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, opts ...Option) int {
	o := options{name: "rath", short: "OpenRath: durable, replayable sessions for agent systems"}
	for _, f := range opts {
		f(&o)
	}
	return newApp(stdin, stdout, stderr, o).execute(ctx, args)
}

// Option adjusts the command line.
type Option func(*options)

type options struct {
	name, short string
	commands    []func(Env) *cobra.Command
	isTerminal  func(io.Writer) bool // tests: which streams count as terminals
}

// Name names the program in its usage and error messages (default
// "rath"), with a one-line description.
func Name(name, short string) Option {
	return func(o *options) {
		o.name = name
		if short != "" {
			o.short = short
		}
	}
}

// Command adds a command of the program's own, made by build with the
// invocation's Env.
func Command(build func(Env) *cobra.Command) Option {
	return func(o *options) { o.commands = append(o.commands, build) }
}

// Env is what a command added with Command gets of its invocation: the
// streams, the global flags and the runtime they open.
type Env struct{ a *app }

// Stdout is where results go.
func (e Env) Stdout() io.Writer { return e.a.stdout }

// Stderr is where progress and errors go.
func (e Env) Stderr() io.Writer { return e.a.stderr }

// JSON reports whether --json asked for machine output.
func (e Env) JSON() bool { return e.a.jsonOut }

// Home is the --home flag ("" when not given).
func (e Env) Home() string { return e.a.home }

// StoreURL is the --store flag ("" when not given).
func (e Env) StoreURL() string { return e.a.storeURL }

// Runtime opens the runtime the global flags name, once per invocation;
// the command line closes it when the command returns.
func (e Env) Runtime(ctx context.Context) (*rath.Runtime, error) { return e.a.runtime(ctx) }

// PrintJSON writes v to Stdout as indented JSON.
func (e Env) PrintJSON(v any) error { return e.a.printJSON(v) }

// UsageError is an error that exits with code 2, for a bad argument.
func UsageError(err error) error { return &codeError{code: exitUsage, err: err} }
