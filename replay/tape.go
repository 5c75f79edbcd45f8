package replay

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
)

// tape is a record indexed by node: the runctx.Player of a replay. The
// node map is read-only once built; each track has its own lock (a node's
// calls come from one goroutine, but nothing relies on that).
type tape struct {
	nodes  map[string]*track
	source *session.Session // the recorded session indexes refer to
	// live: past a node's record the run goes on live (Resume); otherwise
	// doing more than the record did is a divergence (Run).
	live bool
	// tools: re-run tools and compare their results with the record.
	tools bool
	// resuming: the run continues the attempts the record holds (Resume),
	// so its steps' sessions say which they continue (Resumes).
	resuming bool

	rechains rechains
}

// track is one node's recorded chunks, in order: positions in the session
// that holds them, read from it when needed (copying every chunk of a
// large record would cost more than the replay).
type track struct {
	mu      sync.Mutex
	src     *session.Session
	pos     []int32  // each chunk's position in src
	source  bool     // src is the tape's source, which Divergence indexes refer to
	digests []string // digest of each chunk, computed when first needed
	next    int
	served  *session.ModelCall // the model call Model last handed out
	// The chunk at last read, which the next calls mostly read again.
	last   int // position + 1; 0 for none
	lastC  session.Chunk
	lastID session.ChunkID
}

func (tr *track) len() int { return len(tr.pos) }

// at is the track's i-th chunk without its place in a chain (what an
// append re-seals), and the id the node gave it (its Origin if a merge
// moved it).
func (tr *track) at(i int) (session.Chunk, session.ChunkID) {
	if tr.last == i+1 {
		return tr.lastC, tr.lastID
	}
	c := tr.src.Chunk(int(tr.pos[i]))
	id := c.ID
	if c.Origin != "" {
		id = c.Origin
	}
	c.ID, c.Parent, c.Origin = "", "", ""
	tr.last, tr.lastC, tr.lastID = i+1, c, id
	return c, id
}

// chunk is at's chunk alone.
func (tr *track) chunk(i int) session.Chunk {
	c, _ := tr.at(i)
	return c
}

// index is the track's i-th chunk's position in the tape's source
// session, -1 if it comes from another.
func (tr *track) index(i int) int {
	if !tr.source {
		return -1
	}
	return int(tr.pos[i])
}

// digestAt is the digest of the track's i-th chunk.
func (tr *track) digestAt(i int) string {
	if tr.digests == nil {
		tr.digests = make([]string, tr.len())
	}
	if tr.digests[i] == "" {
		tr.digests[i] = digest(tr.chunk(i))
	}
	return tr.digests[i]
}

// newTape indexes the chunks of sessions by node. A node found in several
// sessions keeps its longest record (the others hold a prefix of it).
func newTape(source *session.Session, sessions ...*session.Session) *tape {
	t := &tape{nodes: map[string]*track{}, source: source, rechains: rechains{record: sessions}}
	for _, s := range sessions {
		local := map[string]*track{}
		var last *track // a node's chunks mostly come in runs
		lastNode := ""
		for i, c := range s.All() {
			if c.Node == "" {
				continue
			}
			tr := last
			if tr == nil || c.Node != lastNode {
				tr = local[c.Node]
				if tr == nil {
					tr = &track{src: s, source: s == source}
					local[c.Node] = tr
				}
			}
			tr.pos = append(tr.pos, int32(i))
			last, lastNode = tr, c.Node
		}
		for n, tr := range local {
			if old := t.nodes[n]; old == nil || tr.len() > old.len() {
				t.nodes[n] = tr
			}
		}
	}
	return t
}

// digest is the id c would have at the start of a chain: a digest of its
// content, time included.
func digest(c session.Chunk) string {
	sealed, err := session.Seal("", c)
	if err != nil {
		return "invalid: " + err.Error()
	}
	return string(sealed.ID)
}

// show is c as indented JSON, for diffs.
func show(c session.Chunk) string {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// same reports whether replayed chunk c says what the track's i-th
// recorded chunk says, time apart.
func (t *tape) same(tr *track, i int, c session.Chunk) bool {
	rec := tr.chunk(i)
	c.Time = rec.Time
	if c.Tier == 0 {
		c.Tier = rec.Tier // the default tier of the kind, set when sealed
	}
	return tr.digestAt(i) == digest(c)
}

// Append implements runctx.Player. A replayed chunk is appended with its
// recorded time; when the new head's id is the recorded chunk's, content
// and chain both match (one seal a chunk). Otherwise the contents are
// compared (the chain may differ where the record was merged).
func (t *tape) Append(node string, s *session.Session, cs ...session.Chunk) (*session.Session, error) {
	tr := t.nodes[node]
	if tr != nil {
		tr.mu.Lock()
		defer tr.mu.Unlock()
	}
	out := s
	var err error
	for _, c := range cs {
		// A sandbox the replay did not need to open: its recorded
		// placement stands, so the chain stays the record's.
		for tr != nil && tr.next < tr.len() && c.Placement == nil {
			if tr.chunk(tr.next).Placement == nil {
				break
			}
			if out, err = tr.copyNext(out); err != nil {
				return s, err
			}
		}
		if tr == nil || tr.next >= tr.len() {
			if !t.live {
				return s, &Divergence{Node: node, Index: -1, What: "the replay appended a " + c.Kind.String() + " chunk the record does not have",
					Expected: "(end of record)", Actual: digest(c), Diff: lineDiff("", show(c))}
			}
			if out, err = out.TryAppend(c); err != nil {
				return s, err
			}
			continue
		}
		rec, id := tr.at(tr.next)
		switch {
		case c.Placement != nil && rec.Placement != nil: // the recorded sandbox id stands
		case c.ModelCall != nil && c.ModelCall == tr.served: // the record's own call, handed back
		case c.ToolResult != nil && c.ToolResult == rec.ToolResult: // the record's own result
		case t.tools && rec.ToolResult != nil && c.ToolResult != nil:
			if !sameOutcome(rec.ToolResult, c.ToolResult) {
				return s, t.diverged(node, tr, c)
			}
		default:
			add := c
			add.Time = rec.Time
			if add.Tier == 0 {
				add.Tier = rec.Tier // the kind's default tier, set when sealed
			}
			next, err := out.TryAppend(add)
			if err != nil {
				return s, err
			}
			if next.Head() != id && !t.same(tr, tr.next, add) {
				return s, t.diverged(node, tr, c)
			}
			out = next
			tr.next++
			continue
		}
		// The recorded chunk itself.
		if out, err = tr.copyNext(out); err != nil {
			return s, err
		}
	}
	return out, nil
}

// copyNext appends the track's next chunk to s as recorded and moves on.
func (tr *track) copyNext(s *session.Session) (*session.Session, error) {
	out, err := s.AppendCopy(tr.src, int(tr.pos[tr.next]))
	if err != nil {
		return s, err
	}
	tr.next++
	return out, nil
}

// diverged reports replayed chunk c differing from the track's next one.
func (t *tape) diverged(node string, tr *track, c session.Chunk) *Divergence {
	rec := tr.chunk(tr.next)
	c.Time = rec.Time
	return &Divergence{Node: node, Index: tr.index(tr.next), What: "a " + c.Kind.String() + " chunk differs from the recorded " + rec.Kind.String(),
		Expected: tr.digestAt(tr.next), Actual: digest(c), Diff: lineDiff(show(rec), show(c))}
}

// sameOutcome compares tool results by what they returned: their content,
// or, for two results both cut to the result limit, the full results' hash
// (a record made before the cut became a note has the remark
// "[truncated: …]" in its content; the full result is the same).
func sameOutcome(a, b *session.ToolResult) bool {
	same := a.FullHash == b.FullHash && a.FullSize == b.FullSize && (a.FullHash != "" || a.Content == b.Content)
	return a.CallID == b.CallID && a.Tool == b.Tool && same && (a.Error == nil) == (b.Error == nil) &&
		(a.Error == nil || a.Error.Kind == b.Error.Kind)
}

// Model implements runctx.Player.
func (t *tape) Model(node string, req *model.Request) (*session.ModelCall, error) {
	tr := t.nodes[node]
	if tr != nil {
		tr.mu.Lock()
		defer tr.mu.Unlock()
	}
	if tr == nil || tr.next >= tr.len() {
		if t.live {
			return nil, nil
		}
		return nil, &Divergence{Node: node, Index: -1, What: "the replay made a model call the record does not have",
			Expected: "(end of record)", Actual: req.Digest(), Diff: lineDiff("", showRequest(req))}
	}
	rec := tr.chunk(tr.next)
	if rec.ModelCall == nil {
		return nil, &Divergence{Node: node, Index: tr.index(tr.next), What: "the replay made a model call where the record has a " + rec.Kind.String() + " chunk",
			Expected: digest(rec), Actual: req.Digest(), Diff: lineDiff(show(rec), showRequest(req))}
	}
	if d := req.Digest(); d != rec.ModelCall.RequestDigest {
		return nil, &Divergence{Node: node, Index: tr.index(tr.next), What: "the model request differs from the recorded one",
			Expected: rec.ModelCall.RequestDigest, Actual: d, Diff: lineDiff(t.recordedRequest(tr.index(tr.next), rec.ModelCall), showRequest(req))}
	}
	tr.served = rec.ModelCall
	return rec.ModelCall, nil
}

// Tool implements runctx.Player.
func (t *tape) Tool(node string, call session.ToolCall) (*session.ToolResult, bool) {
	tr := t.nodes[node]
	if tr == nil {
		return nil, false
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if !t.tools {
		for i := tr.next; i < tr.len(); i++ {
			c := tr.chunk(i)
			if c.ToolResult != nil && c.ToolResult.CallID == call.ID {
				return c.ToolResult, false // the record's own: appended back, it is copied verbatim
			}
			if c.Assistant != nil {
				break // the next turn: the call has no result in the record
			}
		}
	}
	// Was the call made? Its turn is the last one replayed.
	for i := tr.next - 1; i >= 0; i-- {
		if c := tr.chunk(i); c.Assistant != nil {
			for _, tc := range c.Assistant.ToolCalls {
				if tc.ID == call.ID {
					return nil, t.live
				}
			}
			break
		}
	}
	return nil, false
}

// Peek implements runctx.Player.
func (t *tape) Peek(node string) (session.Chunk, bool) {
	tr := t.nodes[node]
	if tr == nil {
		return session.Chunk{}, false
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.next >= tr.len() {
		return session.Chunk{}, false
	}
	return tr.chunk(tr.next), true
}

// unplayed returns the first recorded chunk no replayed chunk matched.
func (t *tape) unplayed() *Divergence {
	var first *Divergence
	for node, tr := range t.nodes {
		if tr.next < tr.len() {
			c := tr.chunk(tr.next)
			d := &Divergence{Node: node, Index: tr.index(tr.next), What: "the replay ended without the recorded " + c.Kind.String() + " chunk",
				Expected: tr.digestAt(tr.next), Actual: "(nothing)", Diff: lineDiff(show(c), "")}
			if first == nil || d.Index < first.Index || (d.Index == first.Index && d.Node < first.Node) {
				first = d
			}
		}
	}
	return first
}

// showRequest is a request as text: model, parameters, then each message.
func showRequest(req *model.Request) string {
	var sb strings.Builder
	p, _ := json.Marshal(req.Record())
	fmt.Fprintf(&sb, "model: %s\nparams: %s\n", req.Model, p)
	for _, m := range req.Messages {
		writeMessage(&sb, m)
	}
	return sb.String()
}

// recordedRequest reconstructs, as text, the request a recorded model
// call sent: its parameters, and the view of the recorded session before
// it (exact for a sequential run; a merged parallel run also shows the
// branches merged before this one).
func (t *tape) recordedRequest(index int, mc *session.ModelCall) string {
	var sb strings.Builder
	p, _ := json.Marshal(mc.Params)
	fmt.Fprintf(&sb, "model: %s\nparams: %s\n", mc.Model, p)
	if index < 0 || t.source == nil {
		return sb.String()
	}
	prefix, err := t.source.ForkAt(index)
	if err != nil {
		return sb.String()
	}
	for _, m := range prefix.Transcript() {
		writeMessage(&sb, m)
	}
	return sb.String()
}

func writeMessage(sb *strings.Builder, m session.Message) {
	fmt.Fprintf(sb, "%s: %s\n", m.Role, m.Content)
	for _, tc := range m.ToolCalls {
		fmt.Fprintf(sb, "  call %s %s\n", tc.Name, tc.Args)
	}
}

var _ runctx.Player = (*tape)(nil)

// dropFailures forgets, for a resume, how each node's last attempt ended
// if it failed: a trailing error chunk, and the failed model call recorded
// just before it (its attempts, no response). They are not steps: the
// resumed run goes on live from the node's last recorded step, as if the
// failure had not happened (a failed or cancelled cluster run resumed).
func (t *tape) dropFailures() {
	for _, tr := range t.nodes {
		n := tr.len()
		for n > 0 && tr.chunk(n-1).Error != nil {
			n--
		}
		if n < tr.len() && n > 0 {
			if mc := tr.chunk(n - 1).ModelCall; mc != nil && unanswered(mc) {
				n--
			}
		}
		tr.pos = tr.pos[:n]
		tr.last, tr.digests = 0, nil
	}
}

// unanswered reports whether a model_call chunk records a call that got
// no response (only its failed attempts).
func unanswered(mc *session.ModelCall) bool {
	r := mc.Response
	return r.Text == "" && len(r.ToolCalls) == 0 && r.FinishReason == "" && r.Refusal == ""
}
