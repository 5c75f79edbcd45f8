package audit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Report is what Verify found.
type Report struct {
	// Lanes and Records count what was read.
	Lanes   int   `json:"lanes"`
	Records int64 `json:"records"`
	// Heads are the lanes as they are now: kept outside the database,
	// they let a later Verify's heads be compared (see the package
	// documentation).
	Heads []LaneHead `json:"heads"`
	// Problems name each lane and record found wrong; none if the log is
	// intact.
	Problems []Problem `json:"problems,omitempty"`
	// Witness is what VerifyWitness read of its witness file (nil from
	// Verify).
	Witness *WitnessReport `json:"witness,omitempty"`
}

// LaneHead is a lane's length in records and its head chunk.
type LaneHead struct {
	Lane    session.ID      `json:"lane"`
	Records int64           `json:"records"`
	Head    session.ChunkID `json:"head"`
	Sealed  bool            `json:"sealed,omitempty"`
}

// Problem is one thing Verify found wrong.
type Problem struct {
	// Lane is the lane concerned ("": the witness file's Line).
	Lane session.ID `json:"lane"`
	// Seq is the record concerned (0: the lane's header, or the lane as
	// a whole).
	Seq int64 `json:"seq"`
	// Line is the witness file's line concerned (VerifyWitness), when
	// the problem is the file's own.
	Line int    `json:"witness_line,omitempty"`
	What string `json:"what"`
}

func (p Problem) String() string {
	if p.Lane == "" && p.Line > 0 {
		return fmt.Sprintf("witness line %d: %s", p.Line, p.What)
	}
	if p.Seq > 0 {
		return fmt.Sprintf("lane %s record %d: %s", p.Lane, p.Seq, p.What)
	}
	return fmt.Sprintf("lane %s: %s", p.Lane, p.What)
}

// verifyPage is how many chunks Verify reads at a time.
const verifyPage = 4096

// Verify checks every lane of st's audit log: the store's hash chain of
// each (store.Store.Verify), that each record decodes, that Seq runs
// 1, 2, 3, … with no gap or repeat and Time never goes back, that each
// lane still holds the chunk its anchor label names (exactly, if it is
// sealed), and that every lane another lane's header names — the lane it
// continues, the lanes it witnessed — still holds what that header says.
// The error, if anything is wrong, wraps ErrTampered and names each lane
// and record (Report.Problems lists them); other errors are reading
// errors.
func Verify(ctx context.Context, st store.Store) (Report, error) {
	return verify(ctx, st, nil)
}

// verify is Verify, and VerifyWitness with wit.
func verify(ctx context.Context, st store.Store, wit *witnessRead) (Report, error) {
	infos, err := st.List(ctx, store.Filter{Labels: map[string]string{LabelLane: laneValue}})
	if err != nil {
		return Report{}, fmt.Errorf("audit: verify: list lanes: %w", err)
	}
	slices.SortFunc(infos, func(a, b store.Info) int { return strings.Compare(string(a.ID), string(b.ID)) })
	var rep Report
	v := &verifier{st: st, rep: &rep, lanes: map[session.ID]*laneState{}}
	for _, in := range infos {
		v.lanes[in.ID] = &laneState{info: in, want: map[int64]session.ChunkID{}}
	}
	// The headers first: what each names is looked for as its lane is
	// read.
	for _, in := range infos {
		if err := v.readHeader(ctx, in); err != nil {
			return rep, err
		}
	}
	v.wantWitnessed(wit)
	for _, in := range infos {
		if err := v.lane(ctx, v.lanes[in.ID]); err != nil {
			return rep, err
		}
	}
	v.crossCheck()
	v.checkWitnessed(wit)
	rep.Lanes = len(infos)
	slices.SortStableFunc(rep.Problems, func(a, b Problem) int {
		return cmp.Or(strings.Compare(string(a.Lane), string(b.Lane)), cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.Line, b.Line))
	})
	if len(rep.Problems) > 0 {
		lines := make([]string, len(rep.Problems))
		for i, p := range rep.Problems {
			lines[i] = p.String()
		}
		return rep, fmt.Errorf("%w: %s", ErrTampered, strings.Join(lines, "; "))
	}
	return rep, nil
}

// verifier is one Verify's state.
type verifier struct {
	st    store.Store
	rep   *Report
	lanes map[session.ID]*laneState
	// claims are the marks headers made of other lanes, by the lane that
	// made them.
	claims []claim
}

// laneState is what Verify learned of one lane.
type laneState struct {
	info    store.Info
	header  *header
	records int64
	// want holds the chunk ids other lanes' headers or the anchor name
	// at a position; read fills got.
	want map[int64]session.ChunkID
	got  map[int64]session.ChunkID
}

// claim is a header's mark of another lane.
type claim struct {
	by   session.ID
	m    mark
	prev bool // the lane continues m.Lane, which must be sealed there
}

func (v *verifier) problem(lane session.ID, seq int64, format string, a ...any) {
	v.rep.Problems = append(v.rep.Problems, Problem{Lane: lane, Seq: seq, What: fmt.Sprintf(format, a...)})
}

// readHeader reads lane in's header and notes what it claims.
func (v *verifier) readHeader(ctx context.Context, in store.Info) error {
	if in.Len == 0 {
		v.problem(in.ID, 0, "the lane is empty (its header is gone)")
		return nil
	}
	first, err := v.st.Range(ctx, in.ID, 0, 1)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("audit: verify: %w", err)
		}
		return nil // reported when the lane is read
	}
	if len(first) == 0 {
		return nil // reported when the lane is read
	}
	h, err := chunkHeader(first[0])
	if err != nil {
		return nil // likewise
	}
	v.lanes[in.ID].header = &h
	var cs []claim
	if h.Prev != nil {
		cs = append(cs, claim{by: in.ID, m: *h.Prev, prev: true})
	}
	for _, m := range h.Seen {
		cs = append(cs, claim{by: in.ID, m: m})
	}
	for _, c := range cs {
		if l := v.lanes[c.m.Lane]; l != nil {
			l.want[c.m.Len] = ""
		}
	}
	v.claims = append(v.claims, cs...)
	return nil
}

// crossCheck compares each header's claims with the lanes as read.
func (v *verifier) crossCheck() {
	for _, c := range v.claims {
		l := v.lanes[c.m.Lane]
		whose := "the lane it continues"
		if !c.prev {
			whose = "a lane it witnessed"
		}
		switch {
		case l == nil:
			v.problem(c.m.Lane, 0, "the lane is missing: lane %s's header names it as %s, with %d records", c.by, whose, c.m.Len)
		case l.records < c.m.Len:
			v.problem(c.m.Lane, l.records+1, "%s missing: lane %s's header saw %d", span(l.records+1, c.m.Len), c.by, c.m.Len)
		case l.got[c.m.Len] != c.m.Head:
			v.problem(c.m.Lane, c.m.Len, "the lane was rewritten: record %d is not the one lane %s's header saw", c.m.Len, c.by)
		case c.prev && l.records > c.m.Len:
			v.problem(c.m.Lane, c.m.Len+1, "records were added after lane %s continued it at record %d", c.by, c.m.Len)
		}
	}
}
