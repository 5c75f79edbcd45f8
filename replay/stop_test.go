package replay_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/replay"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/sqlite"
	"github.com/openrath/rath/tool"
)

// effectTool counts its executions (the evidence of what ran, kept outside
// the runtime) and, on the call named holdOn, waits: until released, or,
// if it honours cancellation, until its context ends.
type effectTool struct {
	tool.Tool
	ran        *atomic.Int32
	holdOn     string
	started    chan struct{} // closed when the held call has begun
	release    chan struct{}
	idempotent bool
	// answers: a cancelled call answers as if it had run, as run_command
	// does with the exit code of the process the cancellation killed.
	answers bool
}

func (e *effectTool) Call(ctx context.Context, env tool.Env, _ json.RawMessage) (string, error) {
	n := e.ran.Add(1)
	if env.CallID == e.holdOn {
		close(e.started)
		select {
		case <-e.release:
		case <-ctx.Done():
			if e.answers {
				return "exit code -1", nil
			}
			return "", context.Cause(ctx)
		}
	}
	return fmt.Sprintf("effect %d", n), nil
}

func (e *effectTool) Idempotent() bool { return e.idempotent }

// threeEffects calls effect three times, then answers.
func threeEffects(ctx context.Context, req *model.Request) (model.Response, error) {
	n := 0
	for _, m := range req.Messages {
		if m.Role == session.RoleTool {
			n++
		}
	}
	if n >= 3 {
		return model.Response{Text: fmt.Sprintf("made %d effects", n)}, nil
	}
	return model.Response{ToolCalls: []session.ToolCall{session.NewToolCall(fmt.Sprintf("e%d", n+1), "effect", `{}`)}}, nil
}

type stopCase struct {
	st   store.Store
	tool *effectTool
	wf   flow.Module
	in   *session.Session
}

func newStopCase(t *testing.T, idempotent bool) *stopCase {
	t.Helper()
	st, err := sqlite.Open(context.Background(), sqlite.Options{Path: filepath.Join(t.TempDir(), "s.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	et := &effectTool{Tool: tool.MustFunc("effect", "Make an effect.", func(context.Context, none) (string, error) { panic("unused") }),
		ran: new(atomic.Int32), holdOn: "e2", started: make(chan struct{}), release: make(chan struct{}), idempotent: idempotent}
	a, err := agent.New(agent.Config{Name: "worker", Model: scripted.Func(threeEffects), Tools: []tool.Tool{et}, Store: st, MaxSteps: 8})
	if err != nil {
		t.Fatal(err)
	}
	return &stopCase{st: st, tool: et, wf: a, in: session.FromUser("make three effects")}
}

// run runs the case under a stop that is asked for once the held call has
// begun; the held call is released after hold (never, if negative) and
// the run gives up on it after grace.
func (c *stopCase) run(t *testing.T, hold, grace time.Duration) (*session.Session, error) {
	t.Helper()
	stopping, abandoned := make(chan struct{}), make(chan struct{})
	go func() {
		<-c.tool.started
		close(stopping)
		if hold >= 0 {
			time.AfterFunc(hold, func() { close(c.tool.release) })
		}
		time.AfterFunc(grace, func() { close(abandoned) })
	}()
	ctx := runctx.WithStop(context.Background(), stopping, abandoned)
	return flow.Run(ctx, c.st, c.wf, c.in)
}

func results(s *session.Session) map[string]*session.ToolResult {
	out := map[string]*session.ToolResult{}
	for _, ch := range s.All() {
		if r := ch.ToolResult; r != nil {
			out[r.CallID] = r
		}
	}
	return out
}

// stored is the agent's session as committed.
func (c *stopCase) stored(t *testing.T) *session.Session {
	t.Helper()
	infos, err := c.st.List(context.Background(), store.Filter{Labels: map[string]string{runctx.Label: string(c.in.ID())}})
	if err != nil || len(infos) != 1 {
		t.Fatalf("the run's sessions: %v, %v", infos, err)
	}
	s, err := c.st.Load(context.Background(), infos[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A stop asked for while a tool call runs lets the call finish within the
// grace period: its result is committed, no further step starts, and the
// resumed run makes each effect once.
func TestStopWaitsForTheCallInFlight(t *testing.T) {
	c := newStopCase(t, false)
	_, err := c.run(t, 50*time.Millisecond, time.Minute)
	if !errors.Is(err, runctx.ErrInterrupted) || !errors.Is(err, runctx.ErrYielded) {
		t.Fatalf("the stopped run: %v", err)
	}
	got := c.stored(t)
	rs := results(got)
	if len(rs) != 2 || rs["e2"] == nil || rs["e2"].Error != nil || c.tool.ran.Load() != 2 {
		t.Fatalf("after the stop: %d results %v, %d effects", len(rs), rs, c.tool.ran.Load())
	}
	if last := got.Chunk(got.Len() - 1); last.ToolResult == nil {
		t.Fatalf("the stopped session ends with a %s chunk, not the held call's result", last.Kind)
	}
	out, err := replay.Resume(runctx.WithReview(context.Background()), c.wf, c.st, c.in.ID())
	if err != nil {
		t.Fatal(err)
	}
	if n := c.tool.ran.Load(); n != 3 || len(results(out)) != 3 {
		t.Fatalf("after the resume: %d effects, %d results", n, len(results(out)))
	}
}

// A call still running past the grace period is cancelled and has no
// result: its effect is unknown. A resume does not make it again: a tool
// that is not idempotent waits for a review, an idempotent one runs again.
func TestStopAbandonsTheCallPastGrace(t *testing.T) {
	for _, idempotent := range []bool{false, true} {
		t.Run(fmt.Sprintf("idempotent=%v", idempotent), func(t *testing.T) {
			c := newStopCase(t, idempotent)
			_, err := c.run(t, -1, 50*time.Millisecond)
			if !errors.Is(err, runctx.ErrInterrupted) {
				t.Fatalf("the stopped run: %v", err)
			}
			rs := results(c.stored(t))
			if len(rs) != 1 || rs["e2"] != nil || c.tool.ran.Load() != 2 {
				t.Fatalf("after the stop: results %v, %d effects", rs, c.tool.ran.Load())
			}
			c.tool.holdOn = "" // resumed, the calls do not hold
			out, err := replay.Resume(runctx.WithReview(context.Background()), c.wf, c.st, c.in.ID())
			var u *agent.Unsettled
			switch {
			case idempotent && err != nil:
				t.Fatalf("resume: %v", err)
			case idempotent:
				if n := c.tool.ran.Load(); n != 4 || len(results(out)) != 3 {
					t.Fatalf("after the resume: %d effects, %d results", n, len(results(out)))
				}
			case !errors.As(err, &u) || len(u.Calls) != 1 || u.Calls[0].ID != "e2":
				t.Fatalf("resume of an abandoned call to a tool that is not idempotent: %v", err)
			case c.tool.ran.Load() != 2:
				t.Fatalf("the abandoned call ran again: %d effects", c.tool.ran.Load())
			}
		})
	}
}

// A call that answers as if it had run when the stop cancels it past the
// grace period (run_command reports the killed process's exit code) is cut
// all the same: its answer is the cancellation's, not the tool's, and is
// not recorded; the resumed run makes each effect once.
func TestStopCutsACallThatAnswersItsCancellation(t *testing.T) {
	c := newStopCase(t, true)
	c.tool.answers = true
	_, err := c.run(t, -1, 50*time.Millisecond)
	if !errors.Is(err, runctx.ErrInterrupted) {
		t.Fatalf("the stopped run: %v", err)
	}
	if rs := results(c.stored(t)); len(rs) != 1 || rs["e2"] != nil {
		t.Fatalf("after the stop: results %v (the cancelled call's answer was recorded)", rs)
	}
	c.tool.holdOn = ""
	out, err := replay.Resume(runctx.WithReview(context.Background()), c.wf, c.st, c.in.ID())
	if err != nil {
		t.Fatal(err)
	}
	if r := results(out)["e2"]; r == nil || r.Content == "exit code -1" {
		t.Fatalf("the resumed run's e2: %+v", r)
	}
}

// A stop asked for while the model answers cuts the call: nothing of that
// step is recorded, and the resumed run takes it again.
func TestStopCutsTheModelCall(t *testing.T) {
	st, err := sqlite.Open(context.Background(), sqlite.Options{Path: filepath.Join(t.TempDir(), "s.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stopping := make(chan struct{})
	calls := 0
	m := scripted.Func(func(ctx context.Context, req *model.Request) (model.Response, error) {
		calls++
		if calls == 2 {
			close(stopping)
			<-ctx.Done()
			return model.Response{}, ctx.Err()
		}
		return threeEffects(ctx, req)
	})
	ran := new(atomic.Int32)
	et := &effectTool{Tool: tool.MustFunc("effect", "Make an effect.", func(context.Context, none) (string, error) { panic("unused") }), ran: ran}
	a, err := agent.New(agent.Config{Name: "worker", Model: m, Tools: []tool.Tool{et}, Store: st, MaxSteps: 8})
	if err != nil {
		t.Fatal(err)
	}
	in := session.FromUser("go")
	ctx := runctx.WithStop(context.Background(), stopping, make(chan struct{}))
	if _, err := flow.Run(ctx, st, a, in); !errors.Is(err, runctx.ErrInterrupted) {
		t.Fatalf("the stopped run: %v", err)
	}
	infos, _ := st.List(context.Background(), store.Filter{Labels: map[string]string{runctx.Label: string(in.ID())}})
	s, err := st.Load(context.Background(), infos[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range s.All() {
		if ch.Error != nil || (ch.ModelCall != nil && len(ch.ModelCall.Attempts) > 0 && ch.ModelCall.Response.Text == "" && len(ch.ModelCall.Response.ToolCalls) == 0) {
			t.Fatalf("the cut model call left a %s chunk", ch.Kind)
		}
	}
	out, err := replay.Resume(context.Background(), a, st, in.ID())
	if err != nil {
		t.Fatal(err)
	}
	if ran.Load() != 3 || len(results(out)) != 3 {
		t.Fatalf("after the resume: %d effects, %d results", ran.Load(), len(results(out)))
	}
}
