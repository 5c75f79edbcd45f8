package session

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestFromUserStampsLeafLineage(t *testing.T) {
	s := FromUser("hello")
	if s.Len() != 1 || s.Chunk(0).Kind != KindUser || s.Chunk(0).User.Text != "hello" {
		t.Fatalf("FromUser: got %v", s.Chunks())
	}
	l := s.Lineage()
	if l.Kind != LineageLeafUser || len(l.Parents) != 0 {
		t.Fatalf("lineage = %+v, want leaf_user without parents", l)
	}
	if err := s.ID().Validate(); err != nil {
		t.Fatal(err)
	}
	sys := FromSystem("be brief")
	if sys.Lineage().Kind != LineageLeafSystem || sys.Chunk(0).Tier != TierDurable {
		t.Fatalf("FromSystem: lineage %+v tier %v", sys.Lineage(), sys.Chunk(0).Tier)
	}
}

func TestAppendKeepsIDAndChainsParents(t *testing.T) {
	s := FromUser("a")
	s2 := s.Append(Assistant("b"), User("c"))
	if s2.ID() != s.ID() {
		t.Fatalf("Append changed the id: %s -> %s", s.ID(), s2.ID())
	}
	if s.Len() != 1 || s2.Len() != 3 {
		t.Fatalf("lengths %d, %d; want 1, 3", s.Len(), s2.Len())
	}
	for i := 1; i < s2.Len(); i++ {
		if s2.Chunk(i).Parent != s2.Chunk(i-1).ID {
			t.Fatalf("chunk %d parent %s, want %s", i, s2.Chunk(i).Parent, s2.Chunk(i-1).ID)
		}
	}
	if s2.Head() != s2.Chunk(2).ID || s2.Chunk(0).ID != s.Head() {
		t.Fatal("head is not the last chunk's id")
	}
	if err := s2.Verify(); err != nil {
		t.Fatal(err)
	}
}

func TestAppendRejectsMalformedChunks(t *testing.T) {
	s := FromUser("a")
	bad := []Chunk{
		{Kind: KindUser},                                     // no body
		{Kind: KindUser, System: &Text{"x"}},                 // wrong body
		{Kind: Kind(99), User: &Text{"x"}},                   // unknown kind
		{Kind: KindUser, User: &Text{"x"}, Note: &Text{"y"}}, // two bodies
		Assistant("", ToolCall{ID: "1", Name: "f", Args: []byte("{nope")}),
		Of(&Decision{Selector: "s", Candidates: []Candidate{{Name: "a"}}, Choice: "b"}),
		Of(&Placement{}),
	}
	for i, c := range bad {
		if _, err := s.TryAppend(c); !errors.Is(err, ErrInvalid) {
			t.Errorf("case %d: TryAppend err = %v, want ErrInvalid", i, err)
		}
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Append of a malformed chunk did not panic")
			}
		}()
		s.Append(Chunk{Kind: KindUser})
	}()
}

func TestForkIsIndependent(t *testing.T) {
	src := FromUser("q").Append(Assistant("a"))
	f := src.Fork()
	if f.ID() == src.ID() || f.Head() != src.Head() || f.Len() != src.Len() {
		t.Fatalf("fork: id %s head %s len %d", f.ID(), f.Head(), f.Len())
	}
	if l := f.Lineage(); l.Kind != LineageFork || len(l.Parents) != 1 || l.Parents[0] != src.ID() {
		t.Fatalf("fork lineage = %+v", l)
	}
	head := src.Head()
	f1 := f.Append(User("branch one"))
	f2 := src.Append(User("source goes on"))
	f3 := f.Append(User("branch two"))
	if src.Len() != 2 || src.Head() != head {
		t.Fatal("appending to forks changed the source")
	}
	if f1.Chunk(2).User.Text != "branch one" || f3.Chunk(2).User.Text != "branch two" || f2.Chunk(2).User.Text != "source goes on" {
		t.Fatalf("branches see each other's chunks: %q %q %q", f1.Chunk(2).User.Text, f3.Chunk(2).User.Text, f2.Chunk(2).User.Text)
	}
	for _, s := range []*Session{f1, f2, f3} {
		if err := s.Verify(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestForkAt(t *testing.T) {
	s := FromUser("0").Append(Assistant("1"), User("2"), Assistant("3"))
	for _, n := range []int{0, 2, 4} {
		f, err := s.ForkAt(n)
		if err != nil {
			t.Fatal(err)
		}
		if f.Len() != n || (n > 0 && f.Head() != s.Chunk(n-1).ID) {
			t.Fatalf("ForkAt(%d): len %d head %s", n, f.Len(), f.Head())
		}
		if f.Lineage().Extras["at"] == "" {
			t.Fatal("ForkAt does not record where it forked")
		}
		g := f.Append(User("new"))
		if err := g.Verify(); err != nil {
			t.Fatal(err)
		}
		if s.Len() != 4 || s.Chunk(min(n, 3)).ID != s.Chunks()[min(n, 3)].ID {
			t.Fatal("ForkAt disturbed the source")
		}
	}
	for _, n := range []int{-1, 5} {
		if _, err := s.ForkAt(n); !errors.Is(err, ErrRange) || !strings.Contains(err.Error(), "4 chunks") {
			t.Errorf("ForkAt(%d) err = %v, want ErrRange naming the length", n, err)
		}
	}
}

func TestForkAtAcrossTrieLevels(t *testing.T) {
	s := build(t, 2000)
	for _, n := range []int{1, 31, 32, 33, 1023, 1024, 1025, 1999} {
		f, err := s.ForkAt(n)
		if err != nil {
			t.Fatal(err)
		}
		g := f.Append(Note("branch"))
		if g.Len() != n+1 || g.Chunk(n).Note == nil || g.Chunk(n-1).ID != s.Chunk(n-1).ID {
			t.Fatalf("ForkAt(%d)+Append: wrong chunks", n)
		}
		if s.Chunk(n).Note != nil {
			t.Fatalf("ForkAt(%d)+Append overwrote the source", n)
		}
		if err := g.Verify(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDetachAndDerive(t *testing.T) {
	s := FromUser("q")
	d := s.Detach()
	if d.ID() == s.ID() || len(d.Lineage().Parents) != 0 || d.Lineage().Kind != LineageDetach || d.Head() != s.Head() {
		t.Fatalf("detach: %+v", d.Lineage())
	}
	o := FromUser("other")
	v := s.Derive("agent:coder", map[string]string{"model": "m"}, o)
	l := v.Lineage()
	if l.Op != "agent:coder" || l.Kind != LineageDerive || len(l.Parents) != 2 || l.Parents[1] != o.ID() {
		t.Fatalf("derive lineage %+v", l)
	}
	l.Parents[0] = "mutated"
	l.Extras["model"] = "mutated"
	if v.Lineage().Parents[0] != s.ID() || v.Lineage().Extras["model"] != "m" {
		t.Fatal("Lineage() exposes the session's own slices")
	}
}

func TestUsageIsCumulative(t *testing.T) {
	call := func(in, out int64) Chunk {
		return Of(&ModelCall{Provider: "p", Model: "m", Usage: Usage{InputTokens: in, OutputTokens: out, CostUSD: 0.5}})
	}
	s := FromUser("q").Append(call(10, 2), Assistant("a"), call(5, 1))
	if u := s.Usage(); u.InputTokens != 15 || u.OutputTokens != 3 || u.Total() != 18 || u.CostUSD != 1 {
		t.Fatalf("usage = %+v", u)
	}
	f, _ := s.ForkAt(2)
	if u := f.Usage(); u.InputTokens != 10 {
		t.Fatalf("ForkAt(2) usage = %+v, want the first call only", u)
	}
	if !New().Usage().IsZero() {
		t.Fatal("empty session has usage")
	}
}

func TestTimesAreNormalised(t *testing.T) {
	loc := time.FixedZone("X", 3600)
	at := time.Date(2026, 1, 2, 3, 4, 5, 123456789, loc)
	s := New().Append(User("x").WithTime(at))
	got := s.Chunk(0).Time
	if got.Location() != time.UTC || got.Nanosecond() != 123456000 || !got.Equal(at.Truncate(time.Microsecond)) {
		t.Fatalf("time %v, want UTC microseconds of %v", got, at)
	}
}

func TestTo(t *testing.T) {
	spec := Spec{Dir: "work", Env: map[string]string{"LANG": "C"}, SecretEnv: []string{"API_KEY"}}
	s := FromUser("q").To("local", spec)
	p := s.Placement()
	if p.Backend != "local" || !p.Spec.Equal(spec) {
		t.Fatalf("placement %+v", p)
	}
	if s.Chunk(s.Len()-1).Kind != KindPlacement {
		t.Fatal("To did not record a placement chunk")
	}
	if !FromUser("q").Placement().IsZero() {
		t.Fatal("unplaced session has a placement")
	}
}

func TestVerifyNamesFirstBadChunk(t *testing.T) {
	s := FromUser("a").Append(Assistant("b"), User("c"), Assistant("d"))
	// Tamper in place with the shared body, as a careless caller could.
	s.Chunk(2).User.Text = "C"
	err := s.Verify()
	var ve *VerifyError
	if !errors.As(err, &ve) || ve.Index != 2 || !errors.Is(err, ErrTampered) {
		t.Fatalf("Verify = %v, want a VerifyError at index 2", err)
	}
	if !strings.Contains(err.Error(), "chunk 2") {
		t.Fatalf("error %q does not name the chunk", err)
	}
}

func TestAssembleChecksLinks(t *testing.T) {
	s := FromUser("a").Append(Assistant("b"), User("c"))
	cs := s.Chunks()
	got, err := Assemble(s.ID(), s.Lineage(), cs)
	if err != nil || got.Head() != s.Head() || got.Len() != 3 {
		t.Fatalf("Assemble = %v, %v", got, err)
	}
	cs[1], cs[2] = cs[2], cs[1]
	if _, err := Assemble(s.ID(), s.Lineage(), cs); !errors.Is(err, ErrTampered) {
		t.Fatalf("Assemble of reordered chunks err = %v, want ErrTampered", err)
	}
	if _, err := Assemble("nope", s.Lineage(), nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Assemble with a bad id err = %v", err)
	}
}

func TestIDs(t *testing.T) {
	before := time.Now().Add(-time.Millisecond)
	a, b := NewID(), NewID()
	if a == b {
		t.Fatal("two ids are equal")
	}
	for _, id := range []ID{a, b} {
		if err := id.Validate(); err != nil {
			t.Fatal(err)
		}
		if ts := id.Time(); ts.Before(before.Truncate(time.Millisecond)) || ts.After(time.Now()) {
			t.Fatalf("id %s time %v, want about now", id, ts)
		}
	}
	early, late := newIDAt(time.UnixMilli(1_000)), newIDAt(time.UnixMilli(2_000))
	if !(early < late) {
		t.Fatalf("ids do not sort by time: %s !< %s", early, late)
	}
	for _, bad := range []ID{"", "ses_", "ses_0123456789ABCDEFGHJKMNPQRU", "ses_8ZZZZZZZZZZZZZZZZZZZZZZZZZ", "xyz_0123456789ABCDEFGHJKMNPQ"} {
		if bad.Validate() == nil {
			t.Errorf("%q validated", bad)
		}
	}
}

func TestAssembleValidatedChecksLinks(t *testing.T) {
	s := FromUser("a").Append(Assistant("b"), User("c"))
	cs := s.Chunks()
	got, err := AssembleValidated(s.ID(), s.Lineage(), cs)
	if err != nil || got.Head() != s.Head() || got.Usage() != s.Usage() {
		t.Fatalf("AssembleValidated = %v, %v", got, err)
	}
	cs[0], cs[1] = cs[1], cs[0]
	if _, err := AssembleValidated(s.ID(), s.Lineage(), cs); !errors.Is(err, ErrTampered) {
		t.Fatalf("reordered chunks: err = %v, want ErrTampered", err)
	}
	cs = s.Chunks()
	cs[2].ID = "sha256:XYZ"
	if _, err := AssembleValidated(s.ID(), s.Lineage(), cs); !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrTampered) {
		t.Fatalf("malformed id: err = %v", err)
	}
}
