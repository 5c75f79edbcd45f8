package session

import (
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
)

// MergeAll merges each of others into s in turn and gives the chain that
// s.Merge(others[0]).Merge(others[1])… gives, chunk for chunk, placement
// restatements included. It is how a fan-out joins its branches: the
// re-chained chunks' canonical encodings are written in parallel, ahead of
// the one part that must go in series (each id hashes its parent's), so a
// join of many branches is not held to one core. The result has a new id and
// merge lineage naming s and every other session.
func (s *Session) MergeAll(others []*Session, opts ...MergeOption) (*Session, error) {
	cfg := mergeConfig{op: "merge"}
	for _, opt := range opts {
		opt(&cfg)
	}
	if len(others) == 0 {
		return s, nil
	}
	var enc *encoder
	if cfg.recorded == nil { // with a record, the chunks are looked up, not encoded
		enc = newEncoder(s.t, others)
		defer enc.stop()
	}
	t := s.t
	for i, o := range others {
		var pre *encoded
		if enc != nil {
			pre = enc.get(i)
		}
		var err error
		if t, err = mergeInto(t, o, cfg, pre); err != nil {
			return nil, fmt.Errorf("merge %s with %s: %w", s.id, o.id, err)
		}
		if enc != nil {
			enc.done(i)
		}
	}
	parents := make([]ID, 0, 1+len(others))
	parents = append(parents, s.id)
	for _, o := range others {
		parents = append(parents, o.id)
	}
	return &Session{id: NewID(), t: t, lin: &Lineage{Parents: parents, Op: cfg.op, Kind: LineageMerge,
		Extras: map[string]string{"sessions": strconv.Itoa(len(parents))}}}, nil
}

// mergeInto is one step of Merge on trees: o's chunks past the common
// prefix re-chained after t's head, then a placement restatement if the
// chain would end placed elsewhere than cfg wants. pre, if it was encoded
// for the prefix found here, saves encoding the chunks again.
func mergeInto(t tree, o *Session, cfg mergeConfig, pre *encoded) (tree, error) {
	ours, theirs := headPlacement(t), o.Placement()
	var want Placement
	switch {
	case cfg.keep == Ours:
		want = ours
	case cfg.keep == Theirs:
		want = theirs
	case !ours.Compatible(theirs):
		return t, fmt.Errorf("%w: %s is placed on %s, the session it merges into on %s: pass KeepPlacement to choose",
			ErrIncompatible, o.id, describePlacement(theirs), describePlacement(ours))
	case !ours.IsZero():
		want = ours
	default:
		want = theirs
	}
	p := commonPrefix(t, o.t)
	var head *entry
	if t.n > 0 {
		head = t.get(t.n - 1)
	}
	fastForward := p == t.n
	usePre := pre != nil && pre.from == p && head != nil && len(head.ID) == idLen
	if usePre && !fastForward && pre.err != nil {
		return t, pre.err
	}
	var err error
	k := 0
	o.t.each(p, func(_ int, e *entry) bool {
		if fastForward {
			head = e
		} else {
			c := e.Chunk
			c.Origin, c.Parent = c.ID, head.ID
			if id, ok := cfg.lookup(c.Origin, c.Parent); ok {
				c.ID = id
			} else if usePre {
				buf := pre.buf[pre.off[k]:pre.off[k+1]]
				copy(buf[pre.parentAt[k]:], head.ID)
				c.ID = hashID(buf)
			} else if c.ID, err = c.computeID(); err != nil {
				return false
			}
			head = newEntry(head, c)
		}
		k++
		t = t.push(head)
		return true
	})
	if err != nil {
		return t, err
	}
	if got := headPlacement(t); !want.IsZero() && !samePlacement(got, want) {
		restated := want
		c := Of(&restated)
		if t.n > 0 {
			c = c.WithTime(t.get(t.n - 1).Time)
		}
		e, err := (&Session{t: t}).seal(t, c)
		if err != nil {
			return t, err
		}
		t = t.push(e)
	}
	return t, nil
}

// lookup returns the recorded id of origin re-chained onto parent, if the
// merge has a record showing it there.
func (cfg mergeConfig) lookup(origin, parent ChunkID) (ChunkID, bool) {
	if cfg.recorded == nil {
		return "", false
	}
	p, id, ok := cfg.recorded(origin)
	return id, ok && p == parent && len(id) == idLen
}

func headPlacement(t tree) Placement {
	if t.n > 0 {
		if p := t.get(t.n - 1).placement; p != nil {
			return *p
		}
	}
	return Placement{}
}

// idLen is the length of a chunk id, "sha256:" and 64 hex digits.
const idLen = len(chunkIDPrefix) + 64

// placeholder stands for the parent while a chunk is encoded ahead.
var placeholder = ChunkID(chunkIDPrefix + "0000000000000000000000000000000000000000000000000000000000000000")

// encoded is one session's chunks past its guessed common prefix with the
// base, each encoded as if re-chained: origin its id, parent a placeholder
// whose text starts at parentAt in its bytes buf[off[k]:off[k+1]].
type encoded struct {
	from     int
	buf      []byte
	off      []int
	parentAt []int
	err      error
	ready    chan struct{}
}

// encoder writes others' encodings on spare cores, at most window sessions
// ahead of the merge that consumes them.
type encoder struct {
	slots []encoded
	turn  chan struct{} // one token per session that may be encoded ahead
	quit  chan struct{}
	once  sync.Once
}

const encodeWindow = 64

func newEncoder(base tree, others []*Session) *encoder {
	e := &encoder{slots: make([]encoded, len(others)), turn: make(chan struct{}, encodeWindow), quit: make(chan struct{})}
	for i := range e.slots {
		e.slots[i].ready = make(chan struct{})
	}
	workers := min(runtime.GOMAXPROCS(0), len(others))
	var next atomic.Int64
	for range workers {
		go func() {
			for {
				select {
				case e.turn <- struct{}{}:
				case <-e.quit:
					return
				}
				i := int(next.Add(1) - 1)
				if i >= len(others) {
					return
				}
				x := &e.slots[i]
				if sp := spare.Get().(*encoded); sp != nil {
					x.buf, x.off, x.parentAt = sp.buf, sp.off, sp.parentAt
				}
				x.encode(base, others[i])
				close(x.ready)
			}
		}()
	}
	return e
}

// get waits for session i's encodings.
func (e *encoder) get(i int) *encoded {
	<-e.slots[i].ready
	return &e.slots[i]
}

// done frees session i's encodings and lets the workers go one further.
func (e *encoder) done(i int) {
	x := &e.slots[i]
	spare.Put(&encoded{buf: x.buf[:0], off: x.off[:0], parentAt: x.parentAt[:0]})
	*x = encoded{}
	<-e.turn
}

// spare holds the buffers of encodings a merge has used.
var spare = sync.Pool{New: func() any { return &encoded{} }}

func (e *encoder) stop() { e.once.Do(func() { close(e.quit) }) }

func (x *encoded) encode(base tree, o *Session) {
	x.from = commonPrefix(base, o.t)
	x.off = append(x.off, 0)
	o.t.each(x.from, func(_ int, e *entry) bool {
		c := e.Chunk
		c.Origin, c.Parent = c.ID, placeholder
		var at int
		if x.buf, at, x.err = appendCanonicalChunkAt(x.buf, &c); x.err != nil {
			x.err = fmt.Errorf("encode %s chunk: %w", c.Kind, x.err)
			return false
		}
		x.parentAt = append(x.parentAt, at-x.off[len(x.off)-1])
		x.off = append(x.off, len(x.buf))
		return true
	})
}
