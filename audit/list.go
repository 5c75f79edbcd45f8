package audit

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/openrath/rath/store"
)

// Filter selects records for List. Zero fields select everything.
type Filter struct {
	// Time in [Since, Until).
	Since, Until time.Time
	Principal    string
	Kind         string
	// Limit caps the result (0: no limit).
	Limit int
}

func (f Filter) match(r Record) bool {
	return (f.Until.IsZero() || r.Time.Before(f.Until)) &&
		(f.Principal == "" || r.Principal == f.Principal) && (f.Kind == "" || r.Kind == f.Kind)
}

// listPage is how many chunks List reads from a lane at a time.
const listPage = 512

// List returns the records of st's audit log that f selects, newest first
// (ties in lane and then Seq order, descending), each with its Lane set. It
// reads each lane from its end back to f.Since, and skips the lanes that
// began after f.Until and the sealed ones whose last record is older than
// f.Since. A record that does not decode is an error wrapping ErrInvalid
// (Verify says more).
func List(ctx context.Context, st store.Store, f Filter) ([]Record, error) {
	lanes, err := st.List(ctx, store.Filter{Labels: map[string]string{LabelLane: laneValue}})
	if err != nil {
		return nil, fmt.Errorf("audit: list lanes: %w", err)
	}
	var out []Record
	for _, in := range lanes {
		if skipLane(in, f) {
			continue
		}
		rs, err := laneRecords(ctx, st, in, f)
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	slices.SortFunc(out, func(a, b Record) int {
		return cmp.Or(b.Time.Compare(a.Time), cmp.Compare(b.Lane, a.Lane), cmp.Compare(b.Seq, a.Seq))
	})
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// skipLane reports whether lane in can hold no record f selects, from its
// labels alone.
func skipLane(in store.Info, f Filter) bool {
	if started, err := time.Parse(timeLayout, in.Labels[LabelStarted]); err == nil && !f.Until.IsZero() && !started.Before(f.Until) {
		return true
	}
	if in.Labels[LabelSealed] != "true" || f.Since.IsZero() {
		return false
	}
	a, err := parseAnchor(in.ID, in.Labels[LabelAnchor])
	return err == nil && a.Len == int64(in.Len-1) && a.Time.Before(f.Since)
}

// laneRecords reads the records of one lane that f selects, from its end
// back to f.Since, at most f.Limit of them.
func laneRecords(ctx context.Context, st store.Store, in store.Info, f Filter) ([]Record, error) {
	var out []Record
	for to := in.Len; to > 1; {
		from := max(1, to-listPage)
		cs, err := st.Range(ctx, in.ID, from, to)
		if err != nil {
			return nil, fmt.Errorf("audit: read lane %s: %w", in.ID, err)
		}
		for i := len(cs) - 1; i >= 0; i-- {
			r, err := chunkRecord(cs[i])
			if err != nil {
				return nil, fmt.Errorf("audit: lane %s record %d: %w (run rath audit verify)", in.ID, from+i, err)
			}
			if r.Time.Before(f.Since) {
				return out, nil
			}
			if f.match(r) {
				r.Lane = in.ID
				out = append(out, r)
				if f.Limit > 0 && len(out) >= f.Limit {
					return out, nil
				}
			}
		}
		to = from
	}
	return out, nil
}
