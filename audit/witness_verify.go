package audit

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/openrath/rath/store"
)

// VerifyWitness is Verify, and checks st's lanes against a witness file
// (Options.WitnessFile) read from witness: that the file's own chain
// holds (each line's hash matches it, each names the hash of the line
// before), and that every head it recorded is still in its lane, at the
// length recorded — a lane cut short, rewritten below a witnessed head,
// removed, or given records after the witness saw it sealed is a problem
// naming the lane and the record. Report.Witness says what was read.
// Problems wrap ErrTampered as Verify's do; other errors are reading
// errors.
func VerifyWitness(ctx context.Context, st store.Store, witness io.Reader) (Report, error) {
	wit, err := readWitness(witness)
	if err != nil {
		return Report{}, fmt.Errorf("audit: verify: %w", err)
	}
	return verify(ctx, st, wit)
}

// wantWitnessed asks for the chunks at the places wit's marks name.
func (v *verifier) wantWitnessed(wit *witnessRead) {
	if wit == nil {
		return
	}
	for lane, ms := range wit.marks {
		if l := v.lanes[lane]; l != nil {
			for _, m := range ms {
				l.want[m.Len] = ""
			}
		}
	}
}

// checkWitnessed compares each lane with the marks wit has of it, and
// adds the file's own problems and what was read to the report. A lane
// gets one problem of each kind, at the first record it concerns.
func (v *verifier) checkWitnessed(wit *witnessRead) {
	if wit == nil {
		return
	}
	v.rep.Problems = append(v.rep.Problems, wit.problems...)
	rep := wit.report
	for id := range v.lanes {
		if _, ok := wit.marks[id]; !ok {
			rep.Unwitnessed++
		}
	}
	v.rep.Witness = &rep
	for lane, ms := range wit.marks {
		slices.SortStableFunc(ms, func(a, b witnessMark) int { return cmp.Compare(a.Len, b.Len) })
		l := v.lanes[lane]
		last := ms[len(ms)-1]
		if l == nil {
			v.problem(lane, 0, "the lane is missing: the witness saw it with %d %s (line %d)", last.Len, plural(int(last.Len), "record", "records"), last.line)
			continue
		}
		var held *witnessMark // the last mark the lane still holds
		for i, m := range ms {
			if m.Len > l.records {
				v.problem(lane, l.records+1, "%s missing: the lane was cut short (the witness saw %d %s, line %d)",
					span(l.records+1, last.Len), last.Len, plural(int(last.Len), "record", "records"), last.line)
				break
			}
			if l.got[m.Len] != m.Head {
				since := ""
				if held != nil {
					since = fmt.Sprintf("; record %d still is, line %d", held.Len, held.line)
				}
				v.problem(lane, m.Len, "the lane was rewritten: record %d is not the one the witness saw (line %d%s)", m.Len, m.line, since)
				break
			}
			held = &ms[i]
		}
		for _, m := range ms {
			if m.Sealed && l.records > m.Len {
				v.problem(lane, m.Len+1, "records were added after the witness saw the lane sealed at record %d (line %d)", m.Len, m.line)
				break
			}
		}
	}
}
