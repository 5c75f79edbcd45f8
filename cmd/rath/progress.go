package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// progress reports long work: on a terminal one line rewritten in place
// with the elapsed time; otherwise plain lines, one at the start and one at
// the end.
type progress struct {
	w     io.Writer
	what  string
	tty   bool
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

// progress starts reporting on stderr, leaving stdout for results.
func (a *app) progress(what string) *progress {
	p := &progress{w: a.stderr, what: what, tty: isTTY(a.stderr), start: time.Now(), stop: make(chan struct{})}
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
				fmt.Fprintf(p.w, "\r%s… %s", p.what, time.Since(p.start).Round(100*time.Millisecond))
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
			if err != nil {
				state = "failed"
			}
			fmt.Fprintf(p.w, "\r\033[K%s: %s in %s\n", p.what, state, time.Since(p.start).Round(time.Millisecond))
		}
	})
}
