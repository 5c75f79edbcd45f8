package audit

import (
	"context"
	"errors"
	"fmt"

	"github.com/openrath/rath/session"
)

// lane checks one lane's chain, records and anchor.
func (v *verifier) lane(ctx context.Context, l *laneState) error {
	id := l.info.ID
	l.got = map[int64]session.ChunkID{}
	var a *mark
	if s, ok := l.info.Labels[LabelAnchor]; ok {
		m, err := parseAnchor(id, s)
		if err != nil {
			v.problem(id, 0, "its anchor label is unreadable: %v", err)
		} else {
			a = &m
			l.want[m.Len] = ""
		}
	}
	// The store's own check: every chunk's id recomputed from its bytes,
	// every parent link, the stored head.
	chainErr := v.st.Verify(ctx, id)
	bad := int64(-1) // the chunk the chain breaks at
	var ve *session.VerifyError
	switch {
	case chainErr == nil:
	case errors.As(chainErr, &ve):
		bad = int64(ve.Index)
	case errors.Is(chainErr, session.ErrTampered):
		v.problem(id, 0, "its hash chain does not verify: %v", chainErr)
	default:
		v.problem(id, 0, "cannot be read: %v", chainErr)
		return nil
	}
	var prevSeq int64
	var prev Record
	for from := 0; from < l.info.Len; from += verifyPage {
		cs, err := v.st.Range(ctx, id, from, min(from+verifyPage, l.info.Len))
		if err != nil {
			v.problem(id, max(int64(from), 1), "cannot be read from chunk %d: %v", from, err)
			if bad >= 0 {
				v.problem(id, bad, "%s", chainWhat(ve))
			}
			return nil
		}
		for k, c := range cs {
			i := int64(from + k)
			if _, ok := l.want[i]; ok {
				l.got[i] = c.ID
			}
			if i == 0 {
				if _, err := chunkHeader(c); err != nil {
					v.problem(id, 0, "its header: %v", err)
				}
				continue
			}
			l.records++
			r, err := chunkRecord(c)
			if i == bad {
				seq := i
				if err == nil {
					seq = r.Seq
				}
				v.problem(id, seq, "%s", chainWhat(ve))
			}
			if err != nil {
				v.problem(id, i, "chunk %d does not hold a record: %v", i, err)
				continue
			}
			v.order(l, prevSeq, prev, r)
			if r.Seq > prevSeq {
				prevSeq, prev = r.Seq, r
			}
		}
	}
	v.rep.Records += l.records
	v.rep.Heads = append(v.rep.Heads, LaneHead{Lane: id, Records: l.records, Head: l.info.Head, Sealed: l.info.Labels[LabelSealed] == "true"})
	switch {
	case a != nil:
		v.anchor(l, *a)
	case l.info.Labels[LabelSealed] == "true":
		v.problem(id, 0, "the lane is sealed but its anchor label is gone")
	}
	return nil
}

// chainWhat says what a broken chain link means for the record there.
func chainWhat(ve *session.VerifyError) string {
	if ve.What == "id" {
		return fmt.Sprintf("edited: chunk %d's content no longer matches its hash", ve.Index)
	}
	return fmt.Sprintf("the chain breaks at chunk %d: a record before it was removed, inserted or moved", ve.Index)
}

// order checks that r follows the lane's previous record (prevSeq; prev,
// if any): the next Seq, and no earlier time.
func (v *verifier) order(l *laneState, prevSeq int64, prev Record, r Record) {
	id := l.info.ID
	switch want := prevSeq + 1; {
	case r.Seq == want:
	case r.Seq > want:
		if r.Seq == want+1 {
			v.problem(id, want, "missing: record %d follows record %d", r.Seq, prevSeq)
		} else {
			v.problem(id, want, "missing, to record %d: record %d follows record %d", r.Seq-1, r.Seq, prevSeq)
		}
	default:
		v.problem(id, r.Seq, "out of order: it follows record %d", prevSeq)
	}
	if prevSeq > 0 && r.Time.Before(prev.Time) {
		v.problem(id, r.Seq, "its time %s is before record %d's, %s", r.Time.Format(timeLayout), prev.Seq, prev.Time.Format(timeLayout))
	}
	if h := l.header; h != nil && r.Time.Before(h.Started) {
		v.problem(id, r.Seq, "its time %s is before the lane began, %s", r.Time.Format(timeLayout), h.Started.Format(timeLayout))
	}
}

// anchor checks the lane against its anchor label.
func (v *verifier) anchor(l *laneState, a mark) {
	id := l.info.ID
	sealed := l.info.Labels[LabelSealed] == "true"
	switch {
	case l.records < a.Len:
		v.problem(id, l.records+1, "%s missing: the lane was cut short (its anchor says %d records)", span(l.records+1, a.Len), a.Len)
	case l.got[a.Len] != a.Head:
		v.problem(id, a.Len, "the lane was rewritten: record %d is not the one its anchor names", a.Len)
	case sealed && l.records > a.Len:
		v.problem(id, a.Len+1, "records were added after the lane was sealed at record %d", a.Len)
	}
}

// span names records from to to: "record 5 is" or "records 5 to 7 are".
func span(from, to int64) string {
	if from == to {
		return fmt.Sprintf("record %d is", from)
	}
	return fmt.Sprintf("records %d to %d are", from, to)
}
