package backend

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/openrath/rath/session"
)

// memLanes is a LaneSource held in maps, to test the walking on its own.
type memLanes struct {
	lanes map[int64]LaneRef
	segs  map[int64][]memSeg // per lane, ordered by first
}

type memSeg struct {
	first, n int
	data     []byte
}

func (m *memLanes) Lane(num int64) (LaneRef, error) {
	l, ok := m.lanes[num]
	if !ok {
		return LaneRef{}, fmt.Errorf("no lane %d", num)
	}
	return l, nil
}

func (m *memLanes) Segments(num int64, from, to int, fn func(first, n int, data []byte) error) error {
	segs := m.segs[num]
	start := 0
	for i, s := range segs {
		if s.first <= from {
			start = i
		}
	}
	for _, s := range segs[start:] {
		if s.first >= to {
			break
		}
		if err := fn(s.first, s.n, s.data); err != nil {
			return err
		}
	}
	return nil
}

// add stores chunks [from, to) of s in lane num as segments of size per.
func (m *memLanes) add(t *testing.T, num int64, s *session.Session, from, to, per int) {
	t.Helper()
	cs := s.Chunks()
	for i := from; i < to; i += per {
		j := min(i+per, to)
		data, err := AppendSegment(nil, cs[i:j])
		if err != nil {
			t.Fatal(err)
		}
		m.segs[num] = append(m.segs[num], memSeg{i, j - i, data})
	}
}

func chainOf(n int) *session.Session {
	s := session.New()
	for i := range n {
		s = s.Append(session.Note(fmt.Sprint("chunk ", i)))
	}
	return s
}

func frameIDs(fs []Frame) []session.ChunkID {
	out := make([]session.ChunkID, len(fs))
	for i, f := range fs {
		out[i] = f.ID
	}
	return out
}

func TestWalkLaneFollowsBases(t *testing.T) {
	root := chainOf(50)
	fork := root.Fork()
	at, _ := fork.ForkAt(30)
	child := at.Append(session.Note("a"), session.Note("b"), session.Note("c"))
	m := &memLanes{lanes: map[int64]LaneRef{
		1: {Num: 1},
		2: {Num: 2, HasBase: true, Base: 1, BaseLen: 30},
	}, segs: map[int64][]memSeg{}}
	m.add(t, 1, root, 0, 50, 7)
	m.add(t, 2, child, 30, 33, 2)
	want := slices.Collect(func(yield func(session.ChunkID) bool) {
		for _, c := range child.All() {
			if !yield(c.ID) {
				return
			}
		}
	})
	for _, r := range [][2]int{{0, 33}, {0, 1}, {29, 31}, {30, 33}, {5, 12}, {32, 33}, {10, 10}} {
		fs, err := LaneFrames(m, m.lanes[2], r[0], r[1])
		if err != nil {
			t.Fatalf("%v: %v", r, err)
		}
		if !slices.Equal(frameIDs(fs), want[r[0]:r[1]]) {
			t.Fatalf("frames %v are wrong", r)
		}
	}
	k, err := SharedPrefix(m, m.lanes[1], 50, root.Head(), child)
	if err != nil || k != 30 {
		t.Fatalf("SharedPrefix(root, child) = %d, %v; want 30", k, err)
	}
	k, err = SharedPrefix(m, m.lanes[1], 50, root.Head(), root.Fork().Append(session.Note("x")))
	if err != nil || k != 50 {
		t.Fatalf("SharedPrefix(root, fork of root) = %d, %v; want 50", k, err)
	}
	short, _ := root.ForkAt(20)
	k, err = SharedPrefix(m, m.lanes[1], 50, root.Head(), short)
	if err != nil || k != 20 {
		t.Fatalf("SharedPrefix(root, its first 20) = %d, %v; want 20", k, err)
	}
	k, err = SharedPrefix(m, m.lanes[1], 50, root.Head(), session.FromUser("unrelated"))
	if err != nil || k != 0 {
		t.Fatalf("SharedPrefix(root, unrelated) = %d, %v; want 0", k, err)
	}
}

func TestWalkLaneReportsCorruption(t *testing.T) {
	s := chainOf(10)
	cases := map[string]func(m *memLanes){
		"missing segment": func(m *memLanes) { m.segs[1] = slices.Delete(m.segs[1], 1, 2) },
		"wrong count":     func(m *memLanes) { m.segs[1][0].n = 99 },
		"garbage":         func(m *memLanes) { m.segs[1][1].data = []byte{9, 9, 9} },
		"no base lane":    func(m *memLanes) { m.lanes[1] = LaneRef{Num: 1, BaseLen: 3} },
	}
	for name, breakIt := range cases {
		t.Run(name, func(t *testing.T) {
			m := &memLanes{lanes: map[int64]LaneRef{1: {Num: 1}}, segs: map[int64][]memSeg{}}
			m.add(t, 1, s, 0, 10, 3)
			breakIt(m)
			_, err := LaneFrames(m, m.lanes[1], 0, 10)
			if err == nil || !strings.Contains(err.Error(), "lane 1") && !strings.Contains(err.Error(), "segment") {
				t.Fatalf("err = %v, want a corruption error naming the lane", err)
			}
		})
	}
	m := &memLanes{lanes: map[int64]LaneRef{1: {Num: 1}}, segs: map[int64][]memSeg{}}
	m.add(t, 1, s, 0, 10, 3)
	stop := errors.New("stop")
	if err := WalkLane(m, m.lanes[1], 0, 10, func(int, []Frame) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("callback error lost: %v", err)
	}
}
