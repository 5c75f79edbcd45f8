package mcp

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// stopGrace is how long Close waits for a stdio server to exit after its
// standard input closes, and again after SIGTERM, before it escalates.
const stopGrace = 2 * time.Second

// stderrWait bounds the wait for a stopped server's last standard error.
const stderrWait = time.Second

// errUnresponsive: a stdio server survived SIGKILL for a whole grace period.
var errUnresponsive = errors.New("the process did not exit even after SIGKILL")

// process is a stdio server's child process. It talks over pipes this side
// owns, so that its exit is seen as soon as it happens (not when a read
// fails) and no pipe is closed under a reader that still needs it. It runs
// in its own process group, which stop signals as a whole: a server started
// through a wrapper (npx, a shell) stops with its children.
type process struct {
	cmd    *exec.Cmd
	stdin  *os.File // our end of its standard input
	stdout *os.File // our end of its standard output
	stderr *os.File // our end of its standard error

	exited chan struct{} // closed once it has exited
	status error         // how it exited (Wait's error); read after exited closes
	copied chan struct{} // closed once its standard error is all copied

	signalled atomic.Bool // stop sent it a signal
}

// startProcess starts the server cfg describes; stderr receives its
// standard error.
func startProcess(cfg ServerConfig, stderr io.Writer) (*process, error) {
	cmd := exec.Command(cfg.Command[0], cfg.Command[1:]...)
	cmd.Env = append(os.Environ(), cfg.Env...)
	setGroup(cmd)
	p := &process{cmd: cmd, exited: make(chan struct{}), copied: make(chan struct{})}
	var theirs []*os.File
	pipe := func(ours **os.File, reading bool) (*os.File, error) {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		if reading {
			*ours = r
			theirs = append(theirs, w)
			return w, nil
		}
		*ours = w
		theirs = append(theirs, r)
		return r, nil
	}
	var err error
	if cmd.Stdin, err = pipe(&p.stdin, false); err == nil {
		if cmd.Stdout, err = pipe(&p.stdout, true); err == nil {
			cmd.Stderr, err = pipe(&p.stderr, true)
		}
	}
	if err == nil {
		err = cmd.Start()
	}
	for _, f := range theirs {
		f.Close() // the child has its copies
	}
	if err != nil {
		p.closeOurs()
		return nil, err
	}
	go func() {
		defer close(p.copied)
		_, _ = io.Copy(stderr, p.stderr)
	}()
	go func() {
		p.status = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// transport is the SDK transport over the process's pipes. Closing it
// closes the server's standard input, the first step of a stdio shutdown;
// its standard output stays open until stop.
func (p *process) transport() sdk.Transport {
	return &sdk.IOTransport{Reader: io.NopCloser(p.stdout), Writer: p.stdin}
}

// hasExited reports whether the process has exited, and how.
func (p *process) hasExited() (error, bool) {
	select {
	case <-p.exited:
		return p.status, true
	default:
		return nil, false
	}
}

// exitCause describes how the process exited.
func (p *process) exitCause() error {
	if p.status == nil {
		return errors.New("the process exited (status 0)")
	}
	return fmt.Errorf("the process exited (%w)", p.status)
}

// stop ends the process as the MCP specification asks: it closes its
// standard input and waits grace for it to exit, then signals its process
// group SIGTERM and waits grace again, then SIGKILL. It returns how the
// process exited and whether it was signalled (a process stopped by a
// signal exits with "signal: terminated": that is this side's doing, not
// the server's failure). Whatever stays of the group is killed, and this
// side's ends of the pipes are closed.
func (p *process) stop(grace time.Duration) (status error, signalled bool, err error) {
	defer p.closeOurs()
	p.stdin.Close()
	for _, sig := range []syscall.Signal{0, syscall.SIGTERM, syscall.SIGKILL} {
		if sig != 0 {
			p.signalled.Store(true)
			_ = signalGroup(p.cmd.Process, sig)
		}
		select {
		case <-p.exited:
			_ = signalGroup(p.cmd.Process, syscall.SIGKILL) // stragglers of the group
			select {                                        // its last words, unless a straggler holds the pipe
			case <-p.copied:
			case <-time.After(stderrWait):
			}
			return p.status, p.signalled.Load(), nil
		case <-time.After(grace):
		}
	}
	return nil, true, errUnresponsive
}

func (p *process) closeOurs() {
	for _, f := range []*os.File{p.stdin, p.stdout, p.stderr} {
		if f != nil {
			f.Close()
		}
	}
}
