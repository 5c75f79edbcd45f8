package flow_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/replay"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store/sqlite"
	"github.com/openrath/rath/tool/builtin"
)

var ctx = context.Background()

// say appends a note: a module that shows where it ran.
func say(text string) flow.Module {
	return flow.Func(func(ctx context.Context, s *session.Session) (*session.Session, error) {
		return runctx.Record(ctx, s, runctx.Invoke(ctx, "say"), session.Note(text))
	})
}

func notes(s *session.Session) []string {
	var out []string
	for _, c := range s.All() {
		if c.Note != nil {
			out = append(out, c.Note.Text)
		}
	}
	return out
}

func TestSequentialPathsAndLineage(t *testing.T) {
	m := flow.Sequential(say("a"), flow.Named("second", say("b")), flow.Sequential(say("c")))
	out, err := flow.Run(ctx, nil, m, session.FromUser("go"))
	if err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for _, c := range out.All() {
		if c.Note != nil {
			nodes = append(nodes, c.Node)
		}
	}
	if strings.Join(nodes, " ") != "0/say#1 second/say#1 2/0/say#1" {
		t.Fatalf("nodes = %v", nodes)
	}
	if l := out.Lineage(); l.Op != "2" || l.Kind != session.LineageDerive {
		t.Fatalf("lineage = %+v", l)
	}
}

func TestParallelForksRunsAndMerges(t *testing.T) {
	var running, peak atomic.Int64
	slow := func(text string) flow.Module {
		return flow.Func(func(ctx context.Context, s *session.Session) (*session.Session, error) {
			n := running.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			defer running.Add(-1)
			for range 1000 {
				if peak.Load() > 1 {
					break
				}
				select {
				case <-ctx.Done():
				default:
				}
			}
			return runctx.Record(ctx, s, runctx.Invoke(ctx, "say"), session.Note(text))
		})
	}
	in := session.FromUser("go")
	p := flow.Parallel(slow("left"), slow("middle"), slow("right"))
	out, err := flow.Run(ctx, nil, p, in)
	if err != nil {
		t.Fatal(err)
	}
	if got := notes(out); strings.Join(got, ",") != "left,middle,right" {
		t.Fatalf("notes in branch order: %v", got)
	}
	l := out.Lineage()
	if l.Op != "parallel" || len(l.Parents) != 4 || !strings.Contains(l.Extras["branches"], ",") {
		t.Fatalf("lineage = %+v", l)
	}
	if out.Chunk(0).ID != in.Chunk(0).ID {
		t.Fatal("the shared prefix was not kept")
	}
	// One failing branch fails the whole, naming it; the others still ran.
	boom := flow.Func(func(context.Context, *session.Session) (*session.Session, error) { return nil, errors.New("boom") })
	if _, err := flow.Run(ctx, nil, flow.Parallel(say("x"), boom), in); err == nil || !strings.Contains(err.Error(), "branch 1: boom") {
		t.Fatalf("a failing branch: %v", err)
	}
}

func TestMapFansOutWithALimit(t *testing.T) {
	var live, peak atomic.Int64
	body := flow.Func(func(ctx context.Context, s *session.Session) (*session.Session, error) {
		n := live.Add(1)
		defer live.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		msgs := s.Transcript()
		return runctx.Record(ctx, s, runctx.Invoke(ctx, "echo"), session.Note("saw "+msgs[len(msgs)-1].Content))
	})
	items := func(*session.Session) ([]string, error) { return []string{"a", "b", "c", "d", "e"}, nil }
	out, err := flow.Run(ctx, nil, flow.Map(items, body, 2), session.FromUser("list"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(notes(out), ","); got != "saw a,saw b,saw c,saw d,saw e" {
		t.Fatalf("notes = %s", got)
	}
	if peak.Load() > 2 {
		t.Fatalf("%d items at once with a limit of 2", peak.Load())
	}
}

func TestLoopUntilTheValidatorApproves(t *testing.T) {
	tries := 0
	body := flow.Func(func(ctx context.Context, s *session.Session) (*session.Session, error) {
		tries++
		return runctx.Record(ctx, s, runctx.Invoke(ctx, "try"), session.Note(fmt.Sprint("attempt ", tries)))
	})
	check := flow.Validate("third-time", func(_ context.Context, s *session.Session) (bool, string, error) {
		n := notes(s)
		ok := n[len(n)-1] == "attempt 3"
		return ok, fmt.Sprintf("%s is %v", n[len(n)-1], ok), nil
	})
	out, err := flow.Run(ctx, nil, &flow.Looper{Body: body, Check: check, Max: 5}, session.FromUser("try"))
	if err != nil || tries != 3 {
		t.Fatalf("tries %d, %v", tries, err)
	}
	var verdicts []string
	for _, c := range out.All() {
		if c.Approval != nil {
			verdicts = append(verdicts, c.Approval.Verdict)
			if c.Tier != session.TierDurable || c.Approval.Reason == "" {
				t.Fatalf("verdict chunk = %+v", c)
			}
		}
	}
	if strings.Join(verdicts, ",") != "rejected,rejected,approved" {
		t.Fatalf("verdicts = %v", verdicts)
	}
	tries = 0
	if _, err := flow.Run(ctx, nil, &flow.Looper{Body: body, Check: check, Max: 2}, session.FromUser("try")); !errors.Is(err, flow.ErrRejected) {
		t.Fatalf("a loop out of iterations: %v", err)
	}
}

func TestSelectorRecordsItsDecision(t *testing.T) {
	routes := []flow.Route{{Name: "docs", Description: "documentation", Module: say("wrote docs")}, {Name: "code", Description: "code", Module: say("wrote code")}}
	byWord := func(_ context.Context, s *session.Session, _ []flow.Route) (string, string, error) {
		if strings.Contains(s.Transcript()[0].Content, "README") {
			return "docs", "mentions the README", nil
		}
		return "code", "default", nil
	}
	out, err := flow.Run(ctx, nil, flow.Selector("kind", byWord, routes...), session.FromUser("fix the README"))
	if err != nil {
		t.Fatal(err)
	}
	if n := notes(out); len(n) != 1 || n[0] != "wrote docs" {
		t.Fatalf("notes = %v", n)
	}
	var d *session.Decision
	for _, c := range out.All() {
		if c.Decision != nil {
			d = c.Decision
		}
	}
	if d == nil || d.Choice != "docs" || d.Reason != "mentions the README" || len(d.Candidates) != 2 || d.Candidates[1].Description != "code" {
		t.Fatalf("decision = %+v", d)
	}
	// A model choosing "none" where it is allowed passes the session on.
	r := flow.ModelSelector("kind", scripted.New(model.Response{Text: `{"route":"none","reason":"neither"}`}), routes...)
	r.AllowNone = true
	out, err = flow.Run(ctx, nil, r, session.FromUser("hello"))
	if err != nil || len(notes(out)) != 0 {
		t.Fatalf("none route: %v, %v", notes(out), err)
	}
	// Bad choices are one clear error.
	for answer, want := range map[string]error{`{"route":"tests","reason":"?"}`: flow.ErrNoRoute, `I pick docs`: model.ErrMalformed} {
		_, err := flow.Run(ctx, nil, flow.ModelSelector("kind", scripted.New(model.Response{Text: answer}), routes...), session.FromUser("x"))
		if !errors.Is(err, want) {
			t.Fatalf("answer %q: %v, want %v", answer, err, want)
		}
	}
}

func TestCompressorHidesButKeeps(t *testing.T) {
	s := session.FromUser("start")
	for i := range 30 {
		s = s.Append(session.Assistant(fmt.Sprintf("step %d %s", i, strings.Repeat("detail ", 20))))
	}
	s = s.Append(session.Note("the key is in /etc/rath"))
	for i := range 8 {
		s = s.Append(session.User(fmt.Sprint("recent ", i)))
	}
	summariser := scripted.New(model.Response{Text: "Thirty steps of work; nothing decided."})
	out, err := flow.Run(ctx, nil, flow.Compressor("trim", summariser), s)
	if err != nil {
		t.Fatal(err)
	}
	var cc *session.Compression
	for _, c := range out.All() {
		if c.Compress != nil {
			cc = c.Compress
		}
	}
	if cc == nil || cc.TokensAfter >= cc.TokensBefore || cc.Count < 20 || cc.Model != "scripted:scripted" {
		t.Fatalf("compression = %+v", cc)
	}
	view := out.Transcript()
	text := fmt.Sprint(view)
	if strings.Contains(text, "step 3 ") || !strings.Contains(text, "Thirty steps") || !strings.Contains(text, "/etc/rath") || !strings.Contains(text, "recent 7") {
		t.Fatalf("view after compression: %s", text)
	}
	if out.Len() < s.Len() || out.Chunk(3).ID != s.Chunk(3).ID {
		t.Fatal("the originals are not kept")
	}
	// Short sessions are left alone.
	short := session.FromUser("hi")
	if out, err := flow.Run(ctx, nil, flow.Compressor("trim", summariser), short); err != nil || out.Len() != short.Len() {
		t.Fatalf("a short session: %d chunks, %v", out.Len(), err)
	}
}

func TestApprovalGatePausesAndResumes(t *testing.T) {
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "s.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m := flow.Sequential(say("before"), flow.Approval("ship", "ship the release"), say("after"))
	in := session.FromUser("release")
	out, err := flow.Run(ctx, st, m, in)
	if !errors.Is(err, flow.ErrPaused) || strings.Join(notes(out), ",") != "before" {
		t.Fatalf("first run: %v, %v", notes(out), err)
	}
	decided, err := flow.Decide(out, true, "ann", "looks good")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := flow.Decide(decided, true, "x", ""); err == nil {
		t.Fatal("a second verdict was accepted")
	}
	if err := st.Commit(ctx, decided, out.Head()); err != nil {
		t.Fatal(err)
	}
	// Resuming replays up to the gate, finds the verdict, and goes on.
	res, err := replay.Resume(ctx, m, st, in.ID())
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(notes(res), ","); got != "before,after" {
		t.Fatalf("after approval: %s", got)
	}
	var verdicts []string
	for _, c := range res.All() {
		if c.Approval != nil {
			verdicts = append(verdicts, c.Approval.Verdict+" by "+c.Approval.By)
		}
	}
	if strings.Join(verdicts, ",") != "requested by ,approved by ann" {
		t.Fatalf("verdicts = %v", verdicts)
	}
	// A rejection stops the run there.
	in2 := session.FromUser("release")
	out2, _ := flow.Run(ctx, st, m, in2)
	rejected, _ := flow.Decide(out2, false, "bob", "not yet")
	if err := st.Commit(ctx, rejected, out2.Head()); err != nil {
		t.Fatal(err)
	}
	if res, err := replay.Resume(ctx, m, st, in2.ID()); !errors.Is(err, flow.ErrRejected) || strings.Join(notes(res), ",") != "before" {
		t.Fatalf("after rejection: %v", err)
	}
}

func TestDescribe(t *testing.T) {
	coder, err := agent.New(agent.Config{Name: "coder", Model: scripted.New(), Tools: builtin.Default(), MemoryScopes: []string{"project/rath"},
		Memory: nil, NeedApproval: []string{"run_command"}})
	if err != nil {
		t.Fatal(err)
	}
	type pipeline struct {
		flow.Module
		Coder  *agent.Agent
		Review flow.Module
	}
	p := pipeline{Coder: coder, Review: flow.Validate("tests-pass", nil)}
	p.Module = flow.Sequential(p.Coder, p.Review)
	tree := flow.Describe(flow.Sequential(flow.Named("plan", say("plan")), flow.Parallel(coder, &p)))
	text := tree.String()
	for _, want := range []string{"root (sequential)", "plan (func)", "branch-0 (agent) model=scripted:scripted tools=read_file", " sandbox", "memory=project/rath", "approval=run_command", "Coder (agent)", "Review (validator)"} {
		if !strings.Contains(text, want) {
			t.Fatalf("describe lacks %q:\n%s", want, text)
		}
	}
	var back flow.Node
	if err := json.Unmarshal(tree.JSON(), &back); err != nil || back.Children[1].Children[0].Agent.Name != "coder" || !back.Children[1].Children[0].Agent.Sandbox {
		t.Fatalf("json: %v\n%s", err, tree.JSON())
	}
}

// A run's committed output carries its run label and the labels the
// context adds, and the context cannot replace the run label.
func TestRunLabelsItsOutput(t *testing.T) {
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "s.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	in := session.FromUser("go")
	lctx := flow.WithOutputLabels(ctx, map[string]string{"rath.workflow": "demo", runctx.Label: "forged"})
	out, err := flow.Run(lctx, st, say("done"), in)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx, out.ID())
	if err != nil {
		t.Fatal(err)
	}
	if info.Labels["rath.workflow"] != "demo" || info.Labels[runctx.Label] != string(in.ID()) {
		t.Fatalf("output labels = %v, want rath.workflow=demo and %s=%s", info.Labels, runctx.Label, in.ID())
	}
}
