package rath_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openrath/rath"
	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/internal/pgtest"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/tool"
)

// holder is a workflow whose input text is a directory: its agent calls
// the hold tool twice (h1, h2). hold is not idempotent: it appends the
// call's id to <dir>/effects and, on h1 while <dir>/block exists, writes
// <dir>/holding and waits until it is killed.
func init() {
	rath.RegisterWorkflow(rath.Workflow{Name: "holder", TakesInput: true, Description: "holds inside a tool call",
		Build: func(ctx context.Context, rt *rath.Runtime) (flow.Module, *session.Session, error) {
			dir, ok := rath.InputText(ctx)
			if !ok {
				return nil, nil, errors.New("holder needs a directory as its input")
			}
			hold, err := tool.FuncWith("hold", "Do something once.", func(ctx context.Context, env tool.Env, _ struct{}) (string, error) {
				return holdCall(ctx, dir, env.CallID)
			})
			if err != nil {
				return nil, nil, err
			}
			m := scripted.Func(func(_ context.Context, req *model.Request) (model.Response, error) {
				n := 0
				for _, msg := range req.Messages {
					if msg.Role == session.RoleTool {
						n++
					}
				}
				if n >= 2 {
					return model.Response{Text: fmt.Sprintf("held %d", n)}, nil
				}
				return model.Response{ToolCalls: []session.ToolCall{session.NewToolCall(fmt.Sprintf("h%d", n+1), "hold", `{}`)}}, nil
			})
			a, err := agent.New(agent.Config{Name: "holder", Instructions: "Hold twice.", Model: m, Tools: []tool.Tool{hold}, MaxSteps: 5})
			return flow.Sequential(a), session.FromUser("hold on"), err
		}})
}

func holdCall(ctx context.Context, dir, call string) (string, error) {
	f, err := os.OpenFile(filepath.Join(dir, "effects"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return "", err
	}
	_, err = f.WriteString(call + "\n")
	f.Close()
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(dir, "block")); err == nil && call == "h1" {
		if err := os.WriteFile(filepath.Join(dir, "holding"), nil, 0o600); err != nil {
			return "", err
		}
		<-ctx.Done()
		return "", ctx.Err()
	}
	return "done " + call, nil
}

// TestOwnerChild is the run's process in TestResumeAfterKill; it runs only
// when that test starts it.
func TestOwnerChild(t *testing.T) {
	dir := os.Getenv("RATH_OWNER_CHILD_DIR")
	if dir == "" {
		t.Skip("started by TestResumeAfterKill")
	}
	ctx := context.Background()
	rt, err := rath.Open(ctx, rath.Config{Home: os.Getenv("RATH_OWNER_CHILD_HOME"), Store: os.Getenv("RATH_OWNER_CHILD_STORE")})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	_, err = rt.Run(ctx, "holder", rath.RunInput(dir), rath.OnStart(func(run session.ID) {
		if err := os.WriteFile(filepath.Join(dir, "run"), []byte(run), 0o600); err != nil {
			t.Error(err)
		}
	}))
	t.Fatalf("the run ended instead of holding: %v", err)
}

func TestResumeAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	t.Run("sqlite", func(t *testing.T) {
		home := t.TempDir()
		resumeAfterKill(t, home, "")
	})
	t.Run("postgres", func(t *testing.T) {
		resumeAfterKill(t, t.TempDir(), pgtest.FreshDB(t, "rath_owner"))
	})
}

func resumeAfterKill(t *testing.T, home, storeURL string) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "block"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	child := exec.Command(os.Args[0], "-test.run=^TestOwnerChild$")
	child.Env = append(os.Environ(), "RATH_OWNER_CHILD_DIR="+dir, "RATH_OWNER_CHILD_HOME="+home, "RATH_OWNER_CHILD_STORE="+storeURL)
	child.Stdout, child.Stderr = os.Stderr, os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			child.Process.Kill()
			child.Wait()
		}
	}()
	waitFor(t, filepath.Join(dir, "holding"))
	b, err := os.ReadFile(filepath.Join(dir, "run"))
	if err != nil {
		t.Fatal(err)
	}
	run := session.ID(b)

	// This process has another home than the run's: it tests, and takes,
	// the lock file the run's owner record names.
	rt, err := rath.Open(ctx, rath.Config{Home: t.TempDir(), Store: storeOr(storeURL, home)})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()

	// Alive: active, and not to be resumed.
	if got := statuses(t, rt, run); got[run] != store.StatusActive {
		t.Fatalf("live run: %v", got)
	}
	if _, err := rt.Resume(ctx, run); !errors.Is(err, rath.ErrRunLive) {
		t.Fatalf("resume of a live run: %v", err)
	}

	child.Process.Signal(syscall.SIGKILL)
	child.Wait()
	killed = true

	// PostgreSQL frees a killed process's advisory lock once its backend
	// notices the closed connection: a moment after the kill.
	var got map[session.ID]store.Status
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		got = statuses(t, rt, run)
		if len(got) < 2 {
			t.Fatalf("the run's sessions: %v", got)
		}
		interrupted := true
		for _, st := range got {
			interrupted = interrupted && st == rath.StatusInterrupted
		}
		if interrupted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("15 s after the kill, the run's sessions are %v, not all interrupted", got)
		}
	}

	// Its workflow must be registered.
	if err := rt.Store.SetLabel(ctx, run, rath.RunWorkflowLabel, "nosuch"); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Resume(ctx, run); !errors.Is(err, rath.ErrUnknownWorkflow) || !strings.Contains(err.Error(), `"nosuch"`) {
		t.Fatalf("resume of a run of an unregistered workflow: %v", err)
	}
	if err := rt.Store.SetLabel(ctx, run, rath.RunWorkflowLabel, "holder"); err != nil {
		t.Fatal(err)
	}

	// Resumed by one of its agent's sessions: the run is found.
	var partial session.ID
	for id := range got {
		if id != run {
			partial = id
		}
	}
	// h1, cut short by the kill, is not made again: the run waits for a
	// person to say whether its effect happened.
	_, err = rt.Resume(ctx, partial)
	if !errors.Is(err, rath.ErrNeedsReview) || !strings.Contains(err.Error(), "hold (h1)") {
		t.Fatalf("resume of a run cut inside a call to a tool that is not idempotent: %v", err)
	}
	if got := statuses(t, rt, run); got[run] != rath.StatusNeedsReview {
		t.Fatalf("a run waiting for a review: %v", got)
	}
	if u, err := rt.Unsettled(ctx, partial); err != nil || u == nil || len(u.Calls) != 1 || u.Calls[0].ID != "h1" {
		t.Fatalf("unsettled: %+v, %v", u, err)
	}
	if _, err := rt.Resume(ctx, run); !errors.Is(err, rath.ErrNeedsReview) {
		t.Fatalf("resumed again unsettled: %v", err)
	}
	// The effects log says it happened.
	if err := rt.Review(ctx, run, rath.ReviewOptions{Verdict: session.VerdictHappened, Result: "done h1", By: "test", Reason: "the effects log has h1"}); err != nil {
		t.Fatal(err)
	}
	if err := rt.Review(ctx, run, rath.ReviewOptions{Verdict: session.VerdictHappened, By: "test"}); !errors.Is(err, rath.ErrNotWaiting) {
		t.Fatalf("a second review: %v", err)
	}
	out, err := rt.Resume(ctx, partial)
	if err != nil {
		t.Fatal(err)
	}
	results := map[string]*session.ToolResult{}
	for _, c := range out.All() {
		if c.ToolResult != nil {
			if results[c.ToolResult.CallID] != nil {
				t.Fatalf("call %s has two results", c.ToolResult.CallID)
			}
			results[c.ToolResult.CallID] = c.ToolResult
		}
	}
	if r := results["h1"]; r == nil || r.Error != nil || r.Content != "done h1" {
		t.Fatalf("h1, settled as happened, has not the result the review gave: %+v", r)
	}
	if r := results["h2"]; r == nil || r.Error != nil || r.Content != "done h2" {
		t.Fatalf("h2: %+v", r)
	}
	if msgs := out.Transcript(); msgs[len(msgs)-1].Content != "held 2" {
		t.Fatalf("final answer: %+v", msgs[len(msgs)-1])
	}
	if effects, _ := os.ReadFile(filepath.Join(dir, "effects")); string(effects) != "h1\nh2\n" {
		t.Fatalf("effects %q: a call ran twice or not at all", effects)
	}
	if err := out.Verify(); err != nil {
		t.Fatal(err)
	}
	// The resumed run replays identically, its workflow built with the
	// input its run recorded (holder needs it).
	if again, err := rt.Replay(ctx, out.ID()); err != nil || again.Head() != out.Head() {
		t.Fatalf("replay of the resumed run: %v", err)
	}

	after := statuses(t, rt, run)
	if after[run] != store.StatusClosed || after[out.ID()] != store.StatusClosed || after[partial] == store.StatusOpen || after[partial] == rath.StatusInterrupted {
		t.Fatalf("after the resume: %v (run %s, output %s, partial %s)", after, run, out.ID(), partial)
	}
	if _, err := rt.Resume(ctx, run); !errors.Is(err, rath.ErrRunFinished) {
		t.Fatalf("resume of a finished run: %v", err)
	}
	info, err := rt.Store.Info(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	var o rath.Owner
	if err := jsonLabel(info, rath.OwnerLabel, &o); err != nil {
		t.Fatal(err)
	}
	if o.PID != os.Getpid() || o.Epoch != 5 { // the run, two resumes that stopped for review, the review, the resume
		t.Fatalf("owner after the resume: %s, epoch %d", o, o.Epoch)
	}
	if storeURL == "" {
		if o.Lock != rath.LockFile {
			t.Fatalf("lock %q on SQLite", o.Lock)
		}
		if filepath.Dir(o.Path) != filepath.Join(home, "runs") {
			t.Fatalf("the resume locked %s, not the run's own lock file", o.Path)
		}
		if _, err := os.Stat(o.Path); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the lock file outlived the run: %v", err)
		}
	} else if o.Lock != rath.LockPostgres {
		t.Fatalf("lock %q on PostgreSQL", o.Lock)
	}
}

// jsonLabel decodes the JSON label key of info into v.
func jsonLabel(info store.Info, key string, v any) error {
	return json.Unmarshal([]byte(info.Labels[key]), v)
}

// storeOr is storeURL, or the default store of home.
func storeOr(storeURL, home string) string {
	if storeURL != "" {
		return storeURL
	}
	return rath.Config{Home: home}.Resolve().Store
}

// statuses judges the run's sessions: its input and those labelled with it.
func statuses(t *testing.T, rt *rath.Runtime, run session.ID) map[session.ID]store.Status {
	t.Helper()
	ctx := context.Background()
	infos, err := rt.Store.List(ctx, store.Filter{Labels: map[string]string{runctx.Label: string(run)}})
	if err != nil {
		t.Fatal(err)
	}
	in, err := rt.Store.Info(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	infos = append(infos, in)
	out := map[session.ID]store.Status{}
	for i, st := range rt.Statuses(ctx, infos) {
		out[infos[i].ID] = st
	}
	return out
}

func waitFor(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
