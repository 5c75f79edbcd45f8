package main

import (
	"bufio"
	"bytes"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

// moment is when the matrix interrupts a process: at after from the
// start of the process, or (fromRun) from the line on stderr that names
// the run ("run NAME ses_…" or "resume ses_…"), which rath prints as the
// run starts.
type moment struct {
	fromRun bool
	after   time.Duration
	// again, if not 0, sends the signal a second time, this long after.
	again time.Duration
}

func (m moment) String() string {
	s := "start+" + m.after.String()
	if m.fromRun {
		s = "run+" + m.after.String()
	}
	if m.again > 0 {
		s += ", again +" + m.again.String()
	}
	return s
}

// ended is how a rath process ended.
type ended struct {
	// signalled: the signal was sent before the process ended (it may
	// still have finished on its own as the signal came).
	signalled bool
	// code is the exit code, -1 if a signal ended the process (then
	// bySignal is that signal).
	code     int
	bySignal syscall.Signal
	stdout   string
	stderr   string
	// runLine is when the run's line came, from the start (0: never).
	runLine time.Duration
	took    time.Duration
	begin   time.Time
}

// runs reports whether rath exited 0.
func (e ended) ok() bool { return e.code == 0 }

// interrupt starts rath with args and sends sig at m, unless the process
// ends before: sig == 0 never sends one. rath runs in a process group of
// its own; SIGINT goes to the group, as a terminal's Ctrl-C does (a
// sandbox's commands run in groups of their own), SIGTERM and SIGKILL
// to the process, as kill(1) and a lost machine do.
func (c *built) interrupt(sig syscall.Signal, m moment, args ...string) ended {
	c.t.Helper()
	cmd := c.command(args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout = &out
	r, w, err := os.Pipe()
	if err != nil {
		c.t.Fatal(err)
	}
	cmd.Stderr = w
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	w.Close()

	// stderr, line by line: the run's line is noted as it comes.
	var mu sync.Mutex
	var errb strings.Builder
	var runLine time.Duration
	sawRun := make(chan struct{})
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			l := sc.Text()
			mu.Lock()
			errb.WriteString(l + "\n")
			if runLine == 0 && isRunLine(l) {
				runLine = time.Since(begin)
				close(sawRun)
			}
			mu.Unlock()
		}
	}()
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()

	e := ended{begin: begin}
	if sig != 0 {
		start := begin
		if m.fromRun {
			select {
			case <-sawRun:
				mu.Lock()
				start = begin.Add(runLine)
				mu.Unlock()
			case <-exited:
			}
		}
		select {
		case <-exited:
		case <-time.After(time.Until(start.Add(m.after))):
			target := cmd.Process.Pid
			if sig == syscall.SIGINT {
				target = -target
			}
			e.signalled = syscall.Kill(target, sig) == nil
			if m.again > 0 {
				select {
				case <-exited:
				case <-time.After(m.again):
					_ = syscall.Kill(target, sig)
				}
			}
		}
	}
	<-exited
	e.took = time.Since(begin)
	// A process the run left behind may hold stderr open: give up on it.
	select {
	case <-read:
	case <-time.After(5 * time.Second):
		r.Close()
		<-read
	}
	r.Close()
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	e.code = ws.ExitStatus()
	if ws.Signaled() {
		e.code, e.bySignal = -1, ws.Signal()
	}
	mu.Lock()
	e.stderr, e.runLine = errb.String(), runLine
	mu.Unlock()
	e.stdout = out.String()
	return e
}

// isRunLine reports whether l is the line rath prints on stderr as a run
// starts or resumes.
func isRunLine(l string) bool {
	return (strings.HasPrefix(l, "run ") || strings.HasPrefix(l, "resume ")) && strings.Contains(l, " ses_")
}
