package agent

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	_ "github.com/openrath/rath/sandbox/local"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/sqlite"
	"github.com/openrath/rath/tool"
	"github.com/openrath/rath/tool/builtin"
)

func call(id, name, args string) session.ToolCall { return session.NewToolCall(id, name, args) }

func TestLoopRecordsEvidenceAndCommitsEachStep(t *testing.T) {
	t.Setenv("RATH_HOME", t.TempDir())
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "r.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m := scripted.New(
		model.Response{Text: "writing", ToolCalls: []session.ToolCall{call("c1", "write_file", `{"path":"main.go","content":"package main\n"}`)},
			Usage: session.Usage{InputTokens: 10, OutputTokens: 5}},
		model.Response{ToolCalls: []session.ToolCall{
			call("c2", "read_file", `{"path":"main.go"}`),
			call("c3", "nope", `{}`),
			call("c4", "read_file", `{"path":`),
		}},
		model.Response{Text: "done", Usage: session.Usage{InputTokens: 20, OutputTokens: 2}},
	)
	a, err := New(Config{Name: "coder", Instructions: "You write Go.", Model: m, Tools: builtin.Default(), Store: st})
	if err != nil {
		t.Fatal(err)
	}
	in := session.FromUser("make a main package").To("local", session.Spec{})
	var committed int
	var out *session.Session
	for ev, err := range a.Run(ctx, in) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == Committed {
			committed++
		}
		if ev.Kind == Done {
			out = ev.Session
		}
	}
	if out.ID() == in.ID() || out.Lineage().Op != "agent:coder" || len(out.Lineage().Parents) != 1 || out.Lineage().Parents[0] != in.ID() {
		t.Fatalf("lineage = %+v", out.Lineage())
	}
	var systems, calls, turns int
	var results []*session.ToolResult
	for _, c := range out.All() {
		switch {
		case c.System != nil:
			systems++
		case c.ModelCall != nil:
			calls++
			if c.ModelCall.RequestDigest == "" || len(c.ModelCall.Attempts) != 1 || c.ModelCall.Provider != "scripted" {
				t.Fatalf("model call = %+v", c.ModelCall)
			}
		case c.Assistant != nil:
			turns++
		case c.ToolResult != nil:
			results = append(results, c.ToolResult)
		}
	}
	if systems != 1 || calls != 3 || turns != 3 || len(results) != 4 {
		t.Fatalf("systems %d, model calls %d, turns %d, results %d", systems, calls, turns, len(results))
	}
	w := results[0]
	if w.Error != nil || w.SandboxID == "" || len(w.Effects) != 1 || w.Effects[0].Op != session.EffectAdded ||
		w.Effects[0].Path != "main.go" || !strings.Contains(w.Effects[0].Diff, "+package main") {
		t.Fatalf("write result = %+v", w)
	}
	if results[1].Content != "package main\n" || results[1].CallID != "c2" {
		t.Fatalf("read result = %+v", results[1])
	}
	if results[2].Error == nil || results[2].Error.Kind != session.ToolErrUnknownTool {
		t.Fatalf("unknown tool result = %+v", results[2])
	}
	if results[3].Error == nil || results[3].Error.Kind != session.ToolErrInvalidArgs {
		t.Fatalf("malformed args result = %+v", results[3])
	}
	if u := out.Usage(); u.InputTokens != 30 || u.OutputTokens != 7 {
		t.Fatalf("usage = %+v", u)
	}
	if committed < 4 {
		t.Fatalf("%d commits for 3 steps", committed)
	}
	stored, err := st.Load(ctx, out.ID())
	if err != nil || stored.Head() != out.Head() {
		t.Fatalf("stored head %v, %v", stored, err)
	}
	// The instructions lead the model's view.
	var firstMsg string
	m2 := scripted.Func(func(_ context.Context, r *model.Request) (model.Response, error) {
		firstMsg = r.Messages[0].Content
		return model.Response{Text: "ok"}, nil
	})
	a2, _ := New(Config{Name: "coder", Instructions: "You write Go.", Model: m2})
	if _, err := a2.Forward(ctx, session.FromUser("hi")); err != nil || firstMsg != "You write Go." {
		t.Fatalf("first message %q, %v", firstMsg, err)
	}
}

func TestMaxStepsRecorded(t *testing.T) {
	loop := scripted.Func(func(context.Context, *model.Request) (model.Response, error) {
		return model.Response{ToolCalls: []session.ToolCall{call("x", "noop", `{}`)}}, nil
	})
	noop := tool.MustFunc("noop", "Does nothing.", func(context.Context, struct{}) (string, error) { return "", nil })
	a, _ := New(Config{Name: "looper", Model: loop, Tools: []tool.Tool{noop}, MaxSteps: 3})
	out, err := a.Forward(context.Background(), session.FromUser("go"))
	if !errors.Is(err, ErrMaxSteps) || out == nil {
		t.Fatalf("err = %v", err)
	}
	last := out.Chunk(out.Len() - 1)
	if last.Error == nil || last.Error.Code != "max_steps" {
		t.Fatalf("last chunk = %+v", last)
	}
}

func TestFinalAnswerDoesNotRequery(t *testing.T) {
	var n atomic.Int64
	m := scripted.Func(func(context.Context, *model.Request) (model.Response, error) {
		n.Add(1)
		return model.Response{Text: "answer"}, nil
	})
	a, _ := New(Config{Name: "a", Model: m})
	if _, err := a.Forward(context.Background(), session.FromUser("q")); err != nil || n.Load() != 1 {
		t.Fatalf("%d model calls, %v", n.Load(), err)
	}
}

func TestBudgetStopsTheRun(t *testing.T) {
	m := scripted.Func(func(context.Context, *model.Request) (model.Response, error) {
		return model.Response{ToolCalls: []session.ToolCall{call("x", "noop", `{}`)}, Usage: session.Usage{InputTokens: 60}}, nil
	})
	noop := tool.MustFunc("noop", "Does nothing.", func(context.Context, struct{}) (string, error) { return "", nil })
	a, _ := New(Config{Name: "a", Model: m, Tools: []tool.Tool{noop}})
	ctx := model.WithBudget(context.Background(), model.NewBudget(model.Limits{Tokens: 100}))
	out, err := a.Forward(ctx, session.FromUser("q"))
	if !errors.Is(err, model.ErrBudgetExceeded) || out.Chunk(out.Len()-1).Error.Code != "budget" {
		t.Fatalf("err = %v", err)
	}
}

func TestParallelDispatchOrderAndConflicts(t *testing.T) {
	var running, peak atomic.Int64
	slow := tool.MustFunc("slow", "Sleeps.", func(_ context.Context, in struct {
		N int `json:"n"`
	}) (int, error) {
		cur := running.Add(1)
		for {
			p := peak.Load()
			if cur <= p || peak.CompareAndSwap(p, cur) {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
		running.Add(-1)
		return in.N, nil
	})
	calls := []session.ToolCall{call("a", "slow", `{"n":1}`), call("b", "slow", `{"n":2}`), call("c", "slow", `{"n":3}`)}
	m := scripted.New(model.Response{ToolCalls: calls}, model.Response{Text: "ok"})
	a, _ := New(Config{Name: "p", Model: m, Tools: []tool.Tool{slow}})
	out, err := a.Forward(context.Background(), session.FromUser("go"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range out.All() {
		if c.ToolResult != nil {
			got = append(got, c.ToolResult.CallID+"="+c.ToolResult.Content)
		}
	}
	if strings.Join(got, ",") != "a=1,b=2,c=3" {
		t.Fatalf("results recorded as %v", got)
	}
	if peak.Load() < 2 {
		t.Fatalf("calls without resources never overlapped (peak %d)", peak.Load())
	}
}

func TestCancellationRecorded(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	block := tool.MustFunc("block", "Blocks.", func(ctx context.Context, _ struct{}) (string, error) {
		cancel()
		<-ctx.Done()
		return "", ctx.Err()
	})
	m := scripted.New(model.Response{ToolCalls: []session.ToolCall{call("b", "block", `{}`)}}, model.Response{Text: "never"})
	a, _ := New(Config{Name: "c", Model: m, Tools: []tool.Tool{block}})
	out, err := a.Forward(ctx, session.FromUser("go"))
	if !errors.Is(err, context.Canceled) || out == nil {
		t.Fatalf("err = %v", err)
	}
	var sawCanceled bool
	for _, c := range out.All() {
		if c.ToolResult != nil && c.ToolResult.Error != nil && c.ToolResult.Error.Kind == session.ToolErrCanceled {
			sawCanceled = true
		}
	}
	if !sawCanceled || out.Chunk(out.Len()-1).Error == nil {
		t.Fatalf("cancellation not recorded")
	}
}

var _ store.Store = (*sqlite.Store)(nil)

func TestConflictingCallsDoNotOverlap(t *testing.T) {
	var running, peak atomic.Int64
	type in struct {
		Path string `json:"path"`
	}
	w, err := tool.FuncWith("w", "Writes.", func(_ context.Context, _ tool.Env, i in) (string, error) {
		if cur := running.Add(1); cur > peak.Load() {
			peak.Store(cur)
		}
		time.Sleep(30 * time.Millisecond)
		running.Add(-1)
		return i.Path, nil
	}, tool.WithResources(func(i in) []tool.Resource { return []tool.Resource{tool.PathWrite(i.Path)} }))
	if err != nil {
		t.Fatal(err)
	}
	calls := []session.ToolCall{call("a", "w", `{"path":"dir"}`), call("b", "w", `{"path":"dir/file"}`), call("c", "w", `{"path":"dir"}`)}
	m := scripted.New(model.Response{ToolCalls: calls}, model.Response{Text: "ok"})
	a, _ := New(Config{Name: "w", Model: m, Tools: []tool.Tool{w}})
	if _, err := a.Forward(context.Background(), session.FromUser("go")); err != nil {
		t.Fatal(err)
	}
	if peak.Load() != 1 {
		t.Fatalf("conflicting writes overlapped (peak %d)", peak.Load())
	}
}

func TestPolicyViolationIsRecorded(t *testing.T) {
	t.Setenv("RATH_HOME", t.TempDir())
	m := scripted.New(
		model.Response{ToolCalls: []session.ToolCall{call("a", "run_command", `{"shell":"rm -rf /"}`), call("b", "write_file", `{"path":"x/y","content":"z"}`)}},
		model.Response{Text: "ok"})
	a, _ := New(Config{Name: "p", Model: m, Tools: builtin.Default(),
		Policy: &tool.Policy{DenyCommands: []*regexp.Regexp{regexp.MustCompile(`rm -rf`)}, Roots: []string{"src"}}})
	out, err := a.Forward(context.Background(), session.FromUser("go").To("local", session.Spec{}))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, c := range out.All() {
		if c.ToolResult != nil && c.ToolResult.Error != nil {
			kinds = append(kinds, c.ToolResult.Error.Kind)
		}
	}
	if strings.Join(kinds, ",") != "policy,policy" {
		t.Fatalf("error kinds = %v", kinds)
	}
}

func TestLongResultTruncatedWithSizeAndHash(t *testing.T) {
	big := strings.Repeat("é", 3000) // 6000 bytes, two per rune
	long := tool.MustFunc("long", "Talks a lot.", func(context.Context, struct{}) (string, error) { return big, nil })
	var seen []session.Message // the tool message of the second request
	m := scripted.Func(func(_ context.Context, req *model.Request) (model.Response, error) {
		if last := req.Messages[len(req.Messages)-1]; last.Role == session.RoleTool {
			seen = append(seen, last)
			return model.Response{Text: "ok"}, nil
		}
		return model.Response{ToolCalls: []session.ToolCall{call("l", "long", ``)}}, nil
	})
	a, _ := New(Config{Name: "t", Model: m, Tools: []tool.Tool{long}, ResultLimit: 1001})
	out, err := a.Forward(context.Background(), session.FromUser("go"))
	if err != nil {
		t.Fatal(err)
	}
	want := []session.ToolNote{{Kind: session.ToolNoteTruncated, Text: "1000 of 6000 bytes shown"}}
	for _, c := range out.All() {
		if r := c.ToolResult; r != nil {
			// The content is the tool's output up to the cut, nothing added:
			// the remark about the cut is a note.
			if r.FullSize != 6000 || !strings.HasPrefix(r.FullHash, "sha256:") || r.Content != strings.Repeat("é", 500) ||
				!reflect.DeepEqual(r.Notes, want) {
				t.Fatalf("result = size %d hash %q content %d bytes, notes %+v", r.FullSize, r.FullHash, len(r.Content), r.Notes)
			}
			// The model is told, apart from the content.
			if len(seen) != 1 || seen[0].Content != r.Content || !reflect.DeepEqual(seen[0].Notes, want) {
				t.Fatalf("the model saw %+v", seen)
			}
			return
		}
	}
	t.Fatal("no tool result")
}

func noopTool() tool.Tool {
	return tool.MustFunc("noop", "Does nothing.", func(context.Context, struct{}) (string, error) { return "", nil })
}
