package runctx_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
)

func TestInvokeCountsPerNodeWithinARun(t *testing.T) {
	ctx := context.Background()
	if got := runctx.Invoke(ctx, "agent:a"); got != "agent:a" {
		t.Fatalf("outside a run Invoke = %q, want the base itself", got)
	}
	ctx = runctx.WithRun(ctx, "s1", nil)
	review := runctx.WithPath(ctx, "review")
	branch := runctx.WithPath(review, "0")
	for i, want := range []string{"review/agent:a#1", "review/agent:a#2"} {
		if got := runctx.Invoke(review, "agent:a"); got != want {
			t.Fatalf("call %d: %q, want %q", i, got, want)
		}
	}
	if got := runctx.Invoke(branch, "agent:a"); got != "review/0/agent:a#1" {
		t.Fatalf("nested path: %q", got)
	}
	if runctx.Path(branch) != "review/0" || runctx.Path(ctx) != "" {
		t.Fatalf("paths %q %q", runctx.Path(branch), runctx.Path(ctx))
	}
	// A new run counts afresh, keeping the path.
	again := runctx.NewRun(review)
	if got := runctx.Invoke(again, "agent:a"); got != "review/agent:a#1" {
		t.Fatalf("after NewRun: %q", got)
	}
	if runctx.ID(again) != "s1" || runctx.ID(context.Background()) != "" {
		t.Fatalf("run id %q", runctx.ID(again))
	}
}

func TestInvokeIsSafeAcrossBranches(t *testing.T) {
	ctx := runctx.WithPath(runctx.WithRun(context.Background(), "s", nil), "fan")
	seen := make(chan string, 100)
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() { seen <- runctx.Invoke(ctx, "agent:w") })
	}
	wg.Wait()
	close(seen)
	names := map[string]bool{}
	for n := range seen {
		names[n] = true
	}
	if len(names) != 100 || !names["fan/agent:w#1"] || !names["fan/agent:w#100"] {
		t.Fatalf("%d distinct names, want 1..100", len(names))
	}
}

func TestModes(t *testing.T) {
	ctx := context.Background()
	if runctx.Storeless(ctx) || runctx.ReviewRequired(ctx) || runctx.RecordedVerdicts(ctx) || runctx.SliceOver(ctx) ||
		runctx.Journal(ctx) != nil || runctx.PlayerFrom(ctx) != nil || runctx.Store(ctx) != nil {
		t.Fatal("a bare context has a mode set")
	}
	if !runctx.Storeless(runctx.WithoutStore(ctx)) || !runctx.ReviewRequired(runctx.WithReview(ctx)) ||
		!runctx.RecordedVerdicts(runctx.WithRecordedVerdicts(ctx)) {
		t.Fatal("a mode set is not seen")
	}
	n := 0
	sliced := runctx.WithSlice(ctx, func() bool { n++; return n < 3 })
	var over []bool
	for range 3 {
		over = append(over, runctx.SliceOver(sliced))
	}
	if fmt.Sprint(over) != "[false false true]" {
		t.Fatalf("SliceOver %v, want it to follow more", over)
	}
}

// tape is a Player over recorded chunks of one node.
type tape struct{ rec []session.Chunk }

func (p *tape) Append(node string, s *session.Session, cs ...session.Chunk) (*session.Session, error) {
	for _, c := range cs {
		if len(p.rec) == 0 {
			s = s.Append(c)
			continue
		}
		want := p.rec[0]
		if want.Decision == nil || c.Decision == nil || want.Decision.Choice != c.Decision.Choice {
			return s, errors.New("diverged")
		}
		p.rec = p.rec[1:]
		s = s.Append(c)
	}
	return s, nil
}
func (p *tape) Model(string, *model.Request) (*session.ModelCall, error) { return nil, nil }
func (p *tape) Tool(string, session.ToolCall) (*session.ToolResult, bool) {
	return nil, false
}
func (p *tape) Peek(string) (session.Chunk, bool) {
	if len(p.rec) == 0 {
		return session.Chunk{}, false
	}
	return p.rec[0], true
}
func (p *tape) Rechained(session.ChunkID) (session.ChunkID, session.ChunkID, bool) {
	return "", "", false
}

func decision(chosen string) session.Chunk {
	cands := []session.Candidate{{Name: "a"}, {Name: "b"}, {Name: "x"}}
	return session.Of(&session.Decision{Selector: "pick", Candidates: cands, Choice: chosen})
}

func TestRecordGoesThroughThePlayer(t *testing.T) {
	s := session.New()
	live, err := runctx.Record(context.Background(), s, "pick#1", decision("a"))
	if err != nil {
		t.Fatal(err)
	}
	if live.Len() != 1 || live.Chunk(0).Node != "pick#1" {
		t.Fatalf("live record: %v, %d chunks", err, live.Len())
	}
	p := &tape{rec: []session.Chunk{decision("a")}}
	ctx := runctx.WithPlayer(context.Background(), p)
	if _, err := runctx.Record(ctx, s, "pick#1", decision("b")); err == nil {
		t.Fatal("a chunk unlike the record was accepted")
	}
	// Served takes recorded chunks while match accepts them.
	got, served, err := runctx.Served(ctx, s, "pick#1", func(c session.Chunk) bool { return c.Decision != nil })
	if err != nil || !served || got.Len() != 1 || got.Chunk(0).Decision.Choice != "a" || got.Chunk(0).Node != "pick#1" {
		t.Fatalf("served: %v %v %d", err, served, got.Len())
	}
	if _, served, _ := runctx.Served(context.Background(), s, "pick#1", func(session.Chunk) bool { return true }); served {
		t.Fatal("served without a player")
	}
}

func TestAdoptReRecordsAsTheNodesOwn(t *testing.T) {
	s := session.New().Append(session.User("hi"))
	n := s.Len()
	s = s.Append(decision("x").WithNode("someone-else"))
	got, err := runctx.Adopt(context.Background(), s, n, "agent:a#1")
	if err != nil || got.Len() != 2 || got.Chunk(1).Node != "agent:a#1" || got.Chunk(1).Decision.Choice != "x" {
		t.Fatalf("adopt: %v, %d chunks", err, got.Len())
	}
	if same, _ := runctx.Adopt(context.Background(), got, got.Len(), "n"); same != got {
		t.Fatal("adopting nothing changed the session")
	}
}

// A module of one's own names its place under the workflow's path and
// records its decision through Record, so that replay checks it.
func ExampleRecord() {
	ctx := runctx.WithPath(runctx.WithRun(context.Background(), "run-1", nil), "triage")
	node := runctx.Invoke(ctx, "rule:urgent")
	s, err := runctx.Record(ctx, session.New(), node,
		session.Of(&session.Decision{Selector: "urgent", Candidates: []session.Candidate{{Name: "escalate"}, {Name: "queue"}},
			Choice: "escalate", Reason: "the user wrote URGENT"}))
	if err != nil {
		panic(err)
	}
	c := s.Chunk(0)
	fmt.Println(c.Node, c.Decision.Choice)
	// Output: triage/rule:urgent#1 escalate
}
