package audit

import (
	"fmt"
	"sync"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// writer is the committer's state: the lane it writes and what it has
// anchored. Only the committer goroutine changes it; mu guards cur for
// Log.Lane.
type writer struct {
	l *Log

	mu  sync.Mutex
	cur *session.Session // the lane as committed; nil before the first
	// sealed: cur takes no more records.
	sealed   bool
	last     mark  // cur's last record (Len, Head, Time)
	anchored int64 // records covered by cur's anchor label
	closeErr error

	// The witness file (nil: none), the records of cur its lines cover
	// (those owed included), and the lines owed to it (witness_log.go).
	wf        *witnessFile
	witnessed int64
	owed      []witnessLine
}

// records is how many records the current lane holds.
func (w *writer) records() int64 {
	if w.cur == nil {
		return 0
	}
	return int64(w.cur.Len() - 1)
}

// commit stores the batch's records, in as many lanes as it takes, and
// answers each Append.
func (w *writer) commit(batch []*pending) {
	limit := int64(w.l.o.LaneLimit)
	for len(batch) > 0 {
		if w.cur == nil || w.sealed || w.records() >= limit {
			if err := w.startLane(); err != nil {
				answer(batch, err)
				return
			}
		}
		n := min(int64(len(batch)), limit-w.records())
		w.commitPart(batch[:n])
		batch = batch[n:]
	}
}

// commitPart commits part to the current lane, which has room for it.
func (w *writer) commitPart(part []*pending) {
	t := now(w.last.Time)
	base := w.records()
	chunks := make([]session.Chunk, len(part))
	for i, p := range part {
		p.r.Seq, p.r.Time = base+int64(i)+1, t
		c, err := recordChunk(p.r)
		if err != nil {
			answer(part, fmt.Errorf("audit: append: %w", err))
			return
		}
		chunks[i] = c
	}
	next, err := w.cur.TryAppend(chunks...)
	if err != nil {
		answer(part, fmt.Errorf("audit: append: %w", err))
		return
	}
	if err := w.store(next, w.cur.Head()); err != nil {
		answer(part, fmt.Errorf("audit: append: %w", err))
		return
	}
	w.last = mark{Lane: next.ID(), Len: int64(next.Len() - 1), Head: next.Head(), Time: t}
	answer(part, nil)
}

// store commits next over prev and makes it the current lane. A commit
// that fails is checked: one that landed after all counts; if the stored
// head is neither, the lane is abandoned and the next record begins a
// new one.
func (w *writer) store(next *session.Session, prev session.ChunkID) error {
	ctx, st := w.l.ctx, w.l.st
	err := st.Commit(ctx, next, prev)
	if err != nil {
		info, ierr := st.Info(ctx, next.ID())
		switch {
		case ierr == nil && info.Head == next.Head():
			err = nil
		case ierr == nil && info.Head != prev:
			w.setCur(nil)
			return fmt.Errorf("lane %s moved under this log (head %s): %w", next.ID(), info.Head.Short(), err)
		default:
			return err
		}
	}
	w.setCur(next)
	return nil
}

func (w *writer) setCur(s *session.Session) {
	w.mu.Lock()
	w.cur = s
	w.mu.Unlock()
}

// answer gives every Append of part its result.
func answer(part []*pending, err error) {
	for _, p := range part {
		p.done <- err
	}
}

// startLane seals the current lane, if any, and begins a new one whose
// header names it (Prev) and witnesses the newest other lanes (Seen).
func (w *writer) startLane() error {
	h := header{Version: 1, Writer: w.l.o.Writer, Started: now(w.last.Time)}
	if w.cur != nil {
		if err := w.seal(); err != nil {
			return fmt.Errorf("audit: seal lane %s: %w", w.cur.ID(), err)
		}
		h.Prev = &mark{Lane: w.last.Lane, Len: w.last.Len, Head: w.last.Head}
	}
	seen, err := w.witness()
	if err != nil {
		return fmt.Errorf("audit: begin a lane: %w", err)
	}
	h.Seen = seen
	c, err := headerChunk(h)
	if err != nil {
		return fmt.Errorf("audit: begin a lane: %w", err)
	}
	s := session.New().Append(c)
	ctx, st := w.l.ctx, w.l.st
	if err := st.Commit(store.WithCreateScope(ctx, store.SystemScope), s, ""); err != nil {
		return fmt.Errorf("audit: begin a lane: %w", err)
	}
	// The labels follow the header, so a lane is found (labelled) before
	// any record is in it.
	if err := st.SetLabels(ctx, s.ID(), map[string]string{LabelLane: laneValue, LabelWriter: h.Writer,
		LabelStarted: h.Started.Format(timeLayout)}); err != nil {
		return fmt.Errorf("audit: begin lane %s: %w", s.ID(), err)
	}
	w.setCur(s)
	w.sealed = false
	w.last = mark{Lane: s.ID(), Len: 0, Head: s.Head(), Time: h.Started}
	w.anchored, w.witnessed = 0, 0
	return nil
}

// witness marks the newest other lanes as they are now.
func (w *writer) witness() ([]mark, error) {
	if w.l.o.Witness < 0 {
		return nil, nil
	}
	infos, err := w.l.st.List(w.l.ctx, store.Filter{Labels: map[string]string{LabelLane: laneValue}, Limit: w.l.o.Witness + 1})
	if err != nil {
		return nil, err
	}
	var seen []mark
	for _, in := range infos {
		if (w.cur != nil && in.ID == w.cur.ID()) || in.Len < 1 || len(seen) == w.l.o.Witness {
			continue
		}
		seen = append(seen, mark{Lane: in.ID, Len: int64(in.Len - 1), Head: in.Head})
	}
	return seen, nil
}

// anchor writes the current lane's anchor label if AnchorEvery records
// have been committed since the last.
func (w *writer) anchor() error {
	if w.cur == nil || w.sealed {
		return nil
	}
	n := w.records() - w.anchored
	if n == 0 || n < int64(w.l.o.AnchorEvery) {
		return nil
	}
	if err := w.l.st.SetLabel(w.l.ctx, w.cur.ID(), LabelAnchor, w.last.String()); err != nil {
		return fmt.Errorf("audit: anchor lane %s: %w", w.cur.ID(), err)
	}
	w.anchored = w.records()
	return nil
}

// seal writes the current lane's final anchor and marks it sealed.
func (w *writer) seal() error {
	if w.sealed {
		return nil
	}
	if err := w.l.st.SetLabels(w.l.ctx, w.cur.ID(), map[string]string{LabelAnchor: w.last.String(), LabelSealed: "true"}); err != nil {
		return err
	}
	w.sealed = true
	w.anchored = w.records()
	// The sealed lane's final line; a failure to write it is kept and
	// tried again with the next.
	w.owe(true)
	_ = w.flushWitness()
	return nil
}

// close seals the current lane as the Log closes, and writes what is owed
// to the witness file.
func (w *writer) close() {
	if w.cur != nil {
		if err := w.seal(); err != nil {
			w.closeErr = fmt.Errorf("audit: close: seal lane %s: %w", w.cur.ID(), err)
		}
	}
	if err := w.closeWitness(); err != nil && w.closeErr == nil {
		w.closeErr = err
	}
}
