package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/openrath/rath"
)

// progress reports long work: on a terminal one line rewritten in place
// with the elapsed time; otherwise plain lines, one at the start and one at
// the end.
type progress struct {
	w    io.Writer
	what string
	tty  bool
	// live, if set, says how far the work has got, after the elapsed
	// time (on a terminal only).
	live  func() string
	start time.Time
	stop  chan struct{}
	once  sync.Once
	wg    sync.WaitGroup
}

// isTTY reports whether w is a terminal.
func isTTY(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// terminal reports whether the command line's stderr is a terminal.
func (a *app) terminal() bool {
	if a.isTerminal != nil {
		return a.isTerminal(a.stderr)
	}
	return isTTY(a.stderr)
}

// progress starts reporting on stderr, leaving stdout for results.
func (a *app) progress(what string) *progress { return a.progressLive(what, nil) }

// progressLive is progress whose line on a terminal also shows live().
func (a *app) progressLive(what string, live func() string) *progress {
	p := &progress{w: a.stderr, what: what, tty: a.terminal(), live: live, start: time.Now(), stop: make(chan struct{})}
	if !p.tty {
		if !a.jsonOut {
			fmt.Fprintf(p.w, "%s…\n", what)
		}
		return p
	}
	p.wg.Go(func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				fmt.Fprintf(p.w, "\r\033[K%s… %s%s", p.what, time.Since(p.start).Round(100*time.Millisecond), p.detail())
			}
		}
	})
	return p
}

// done ends the report.
func (p *progress) done(err error) {
	p.once.Do(func() {
		close(p.stop)
		p.wg.Wait()
		if p.tty {
			state := "done"
			switch {
			case errors.Is(err, rath.ErrInterrupted):
				state = "interrupted"
			case err != nil:
				state = "failed"
			}
			fmt.Fprintf(p.w, "\r\033[K%s: %s in %s%s\n", p.what, state, time.Since(p.start).Round(time.Millisecond), p.detail())
		}
	})
}

// detail is what live says, after a separator ("" without it).
func (p *progress) detail() string {
	if p.live == nil {
		return ""
	}
	if s := p.live(); s != "" {
		return " · " + s
	}
	return ""
}
