package audit

import (
	"errors"
	"fmt"
	"time"
)

// The committer's side of the witness file (Options.WitnessFile): which
// of its lane's records a witness line covers, and the lines owed to the
// file while it cannot be written.

// unwitnessed is how many of the current lane's records no witness line
// covers yet (0 without a witness file, or once the lane is sealed).
func (w *writer) unwitnessed() int64 {
	if w.wf == nil || w.cur == nil || w.sealed {
		return 0
	}
	return w.last.Len - w.witnessed
}

// publish writes a line for the current lane as it is now, after the
// lines owed.
func (w *writer) publish() {
	if w.unwitnessed() > 0 {
		w.owe(false)
	}
	_ = w.flushWitness()
}

// rearm is the witness's deadline: due, or a new one if lines wait and
// none is set.
func (w *writer) rearm(due <-chan time.Time) <-chan time.Time {
	if due == nil && (w.unwitnessed() > 0 || len(w.owed) > 0) {
		return time.After(w.l.o.WitnessInterval)
	}
	return due
}

// owe queues a line for the current lane's last mark (sealed: its final
// one).
func (w *writer) owe(sealed bool) {
	if w.wf == nil || w.cur == nil {
		return
	}
	m := w.last
	// A newer line of the same lane replaces an unsealed one still owed.
	if k := len(w.owed) - 1; k >= 0 && w.owed[k].Lane == m.Lane && !w.owed[k].Sealed {
		w.owed = w.owed[:k]
	}
	w.owed = append(w.owed, witnessLine{Lane: m.Lane, Len: m.Len, Head: m.Head, Sealed: sealed})
	w.witnessed = m.Len
}

// flushWitness writes the lines owed. A failure is logged and kept: the
// lines are written with the next, and Close reports it if it lasts.
func (w *writer) flushWitness() error {
	if w.wf == nil || len(w.owed) == 0 {
		return nil
	}
	t := time.Now()
	for i := range w.owed {
		w.owed[i].Time = t
	}
	if err := w.wf.append(w.owed); err != nil {
		w.l.o.Logger.Warn("audit: a witness line is not written yet", "file", w.wf.path, "err", err)
		return err
	}
	w.owed = w.owed[:0]
	return nil
}

// closeWitness writes what is owed to the witness file and closes it.
func (w *writer) closeWitness() error {
	if w.wf == nil {
		return nil
	}
	err := w.flushWitness()
	if err != nil {
		err = fmt.Errorf("audit: close: %d witness %s not written: %w", len(w.owed), plural(len(w.owed), "line", "lines"), err)
	}
	return errors.Join(err, w.wf.close())
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
