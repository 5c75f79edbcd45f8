package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/openrath/rath"
	"github.com/openrath/rath/session"
)

// interrupt is what SIGINT and SIGTERM do to a command. The first signal
// asks a run (rath run, rath resume) to stop at its next safe point, which
// leaves it interrupted and resumable; any other command is cancelled (a
// worker drains). A second signal exits at once: a run is still left
// resumable, as after a kill.
type interrupt struct {
	stop   chan struct{} // closed at the first signal
	cancel context.CancelFunc
	exit   func(code int)

	mu     sync.Mutex
	sig    os.Signal // the first signal, once received
	gentle bool      // a run takes the first signal as a request to stop
}

func newInterrupt(cancel context.CancelFunc, exit func(int)) *interrupt {
	return &interrupt{stop: make(chan struct{}), cancel: cancel, exit: exit}
}

// watch acts on the signals sigs delivers until the process ends.
func (in *interrupt) watch(sigs <-chan os.Signal) {
	first := <-sigs
	in.mu.Lock()
	in.sig = first
	gentle := in.gentle
	in.mu.Unlock()
	close(in.stop)
	if !gentle {
		in.cancel()
	}
	second := <-sigs
	in.exit(exitCode(second))
}

// gently registers a run that takes the first signal as a request to stop,
// and returns the channel that signal closes.
func (in *interrupt) gently() <-chan struct{} {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.gentle = true
	return in.stop
}

// received is the first signal, nil before one came.
func (in *interrupt) received() os.Signal {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.sig
}

// exitCode is the shell's code for a process ended by sig: 128 + its
// number (130 for SIGINT, 143 for SIGTERM).
func exitCode(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return exitError
}

type interruptKey struct{}

func withInterrupt(ctx context.Context, in *interrupt) context.Context {
	return context.WithValue(ctx, interruptKey{}, in)
}

// stopOn is the run option that has a run stop on the first signal, when
// the command line watches signals (Main).
func (a *app) stopOn(ctx context.Context) []rath.RunOption {
	in, _ := ctx.Value(interruptKey{}).(*interrupt)
	if in == nil {
		return nil
	}
	return []rath.RunOption{rath.StopOn(in.gently(), a.grace)}
}

// interrupted turns a run's ErrInterrupted into the one sentence a person
// reads and the exit code of the signal that stopped it.
func (a *app) interrupted(ctx context.Context, run session.ID, err error) error {
	if !errors.Is(err, rath.ErrInterrupted) {
		return err
	}
	code, how := exitError, "stopped"
	if in, _ := ctx.Value(interruptKey{}).(*interrupt); in != nil {
		if sig := in.received(); sig != nil {
			code = exitCode(sig)
			how = "stopped by " + signalName(sig)
		}
	}
	return &codeError{code: code, err: fmt.Errorf("run %s was %s at a safe point and is interrupted; resume it with: %s resume %s",
		run, how, a.self(), run)}
}

func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "Ctrl-C (SIGINT)"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}

// graceFlag adds --grace to a command that runs a workflow.
func (a *app) graceFlag(c *cobra.Command) {
	c.Flags().DurationVar(&a.grace, "grace", rath.DefaultGrace,
		"on Ctrl-C or SIGTERM, how long the run waits for its tool calls in flight before it gives up on them (their effect then unknown)")
}
