package replay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/replay"
	"github.com/openrath/rath/sandbox"
	_ "github.com/openrath/rath/sandbox/local"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/sqlite"
	"github.com/openrath/rath/tool"
)

const bumps = 5

type none struct{}

// bumpTool is the schema and name of bump; counterTool does the work.
func bumpTool() tool.Tool {
	return tool.MustFunc("bump", "Increment the counter.", func(ctx context.Context, _ none) (string, error) {
		panic("unused")
	})
}

// counterTool increments the counter file in the sandbox: a side effect
// that must never happen twice. hold keeps the call running after the
// increment (for a kill to land inside it).
type counterTool struct {
	tool.Tool
	hold time.Duration
}

func (c counterTool) Call(ctx context.Context, env tool.Env, _ json.RawMessage) (string, error) {
	if env.Sandbox == nil {
		return "", tool.ErrNoSandbox
	}
	res, err := env.Sandbox.Exec(ctx, sandbox.Command{Shell: `n=$(cat counter 2>/dev/null || echo 0); echo $((n+1)) > counter; cat counter`})
	if err != nil {
		return "", err
	}
	time.Sleep(c.hold)
	return strings.TrimSpace(string(res.Stdout)), nil
}

func (counterTool) Idempotent() bool { return false }

// bumper calls bump until the record holds five results, thinking for
// think before each answer.
func bumper(think time.Duration) model.Model {
	return scripted.Func(func(ctx context.Context, req *model.Request) (model.Response, error) {
		time.Sleep(think)
		n := 0
		for _, m := range req.Messages {
			if m.Role == session.RoleTool {
				n++
			}
		}
		if n >= bumps {
			return model.Response{Text: fmt.Sprintf("bumped %d times", n)}, nil
		}
		return model.Response{ToolCalls: []session.ToolCall{session.NewToolCall(fmt.Sprintf("b%d", n+1), "bump", `{}`)}}, nil
	})
}

func crashWorkflow(t testing.TB, st store.Store, think, hold time.Duration) flow.Module {
	a, err := agent.New(agent.Config{Name: "worker", Instructions: "Bump the counter five times.", Model: bumper(think),
		Tools: []tool.Tool{counterTool{Tool: bumpTool(), hold: hold}}, Store: st, MaxSteps: 10})
	if err != nil {
		t.Fatal(err)
	}
	return flow.Sequential(a, flow.Validate("five", func(_ context.Context, s *session.Session) (bool, string, error) {
		msgs := s.Transcript()
		return strings.Contains(msgs[len(msgs)-1].Content, "bumped"), "a final answer", nil
	}))
}

// TestCrashChild is the workflow process of TestCrashResume; it runs only
// when that test starts it.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv("RATH_CRASH_DIR")
	if dir == "" {
		t.Skip("started by TestCrashResume")
	}
	hold, _ := time.ParseDuration(os.Getenv("RATH_CRASH_HOLD"))
	think, _ := time.ParseDuration(os.Getenv("RATH_CRASH_THINK"))
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(dir, "store.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m := crashWorkflow(t, st, think, hold)
	switch os.Getenv("RATH_CRASH_MODE") {
	case "run":
		in := session.FromUser("bump it").To("local", session.Spec{Dir: filepath.Join(dir, "ws")})
		if err := os.WriteFile(filepath.Join(dir, "run-id"), []byte(in.ID()), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := flow.Run(ctx, st, m, in); err != nil {
			t.Fatal(err)
		}
	case "resume":
		id, err := os.ReadFile(filepath.Join(dir, "run-id"))
		if err != nil {
			t.Fatal(err)
		}
		out, err := replay.Resume(ctx, m, st, session.ID(id))
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(filepath.Join(dir, "out.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := session.Encode(f, out); err != nil {
			t.Fatal(err)
		}
	}
}

func child(t *testing.T, dir, mode string, hold, think time.Duration) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.v")
	cmd.Env = append(os.Environ(), "RATH_CRASH_DIR="+dir, "RATH_CRASH_MODE="+mode, "RATH_CRASH_HOLD="+hold.String(), "RATH_CRASH_THINK="+think.String(),
		"RATH_HOME="+filepath.Join(dir, "home"))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd
}

// resultCommitted reports whether st holds the result of tool call id.
func resultCommitted(st store.Store, id string) bool {
	infos, err := st.List(ctx, store.Filter{})
	if err != nil {
		return false
	}
	for _, info := range infos {
		s, err := st.Load(ctx, info.ID)
		if err != nil {
			continue
		}
		for _, c := range s.All() {
			if c.ToolResult != nil && c.ToolResult.CallID == id {
				return true
			}
		}
	}
	return false
}

func counter(t *testing.T, dir string) int {
	b, _ := os.ReadFile(filepath.Join(dir, "ws", "counter"))
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// crashAndResume runs the workflow in a process, SIGKILLs it once the
// counter reaches 2 (with between, once the second bump's result is
// committed too: the kill lands in the model's think before the third),
// resumes it in another, and returns the resumed session.
func crashAndResume(t *testing.T, hold time.Duration, between bool) (*session.Session, string) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "ws"), 0o755)
	// The model thinks 150 ms before each call; a second when the kill is
	// to land between steps, which it then finds on a loaded machine.
	think := 150 * time.Millisecond
	if between {
		think = time.Second
	}
	run := child(t, dir, "run", hold, think)
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for counter(t, dir) < 2 {
		if time.Now().After(deadline) {
			run.Process.Kill()
			t.Fatal("the workflow never reached the second bump")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if between {
		// Not a fixed wait after the counter: on a loaded machine the
		// result may not be committed 60 ms after the effect, and the
		// kill would land inside the call.
		st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(dir, "store.db")})
		if err != nil {
			run.Process.Kill()
			t.Fatal(err)
		}
		defer st.Close()
		for !resultCommitted(st, "b2") {
			if time.Now().After(deadline) {
				run.Process.Kill()
				t.Fatal("the second bump's result was never committed")
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	run.Process.Signal(syscall.SIGKILL)
	run.Wait()
	if n := counter(t, dir); n >= bumps {
		t.Fatalf("the kill came too late: counter %d", n)
	}
	if err := child(t, dir, "resume", 0, think).Run(); err != nil {
		t.Fatalf("resume: %v", err)
	}
	f, err := os.Open(filepath.Join(dir, "out.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out, err := session.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if got := counter(t, dir); got != bumps {
		t.Fatalf("counter %d after resuming, want %d: a side effect was repeated or lost", got, bumps)
	}
	return out, dir
}

// shape is a session modulo ids and times: each chunk's kind, node and
// what it said.
func shape(s *session.Session) []string {
	var out []string
	for _, c := range s.All() {
		line := fmt.Sprintf("%s %s", c.Kind, c.Node)
		switch {
		case c.User != nil:
			line += " " + c.User.Text
		case c.System != nil:
			line += " " + c.System.Text
		case c.Assistant != nil:
			line += " " + c.Assistant.Text
			for _, tc := range c.Assistant.ToolCalls {
				line += " call:" + tc.ID
			}
		case c.ToolResult != nil:
			line += " " + c.ToolResult.CallID + "=" + c.ToolResult.Content
			if c.ToolResult.Error != nil {
				line += " error:" + c.ToolResult.Error.Kind
			}
		case c.Approval != nil:
			line += " " + c.Approval.Verdict
		}
		out = append(out, line)
	}
	return out
}

func noDuplicates(t *testing.T, s *session.Session) {
	seen := map[session.ChunkID]bool{}
	calls := map[string]bool{}
	for _, c := range s.All() {
		if seen[c.ID] {
			t.Fatalf("chunk %s twice", c.ID)
		}
		seen[c.ID] = true
		if c.ToolResult != nil {
			if calls[c.ToolResult.CallID] {
				t.Fatalf("call %s has two results", c.ToolResult.CallID)
			}
			calls[c.ToolResult.CallID] = true
		}
	}
}

func TestCrashResume(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	// The uninterrupted run, for reference.
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(dir, "store.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ref, err := flow.Run(ctx, st, crashWorkflow(t, st, 0, 0), session.FromUser("bump it").To("local", session.Spec{Dir: t.TempDir()}))
	if err != nil {
		t.Fatal(err)
	}

	t.Run("KilledBetweenSteps", func(t *testing.T) {
		out, _ := crashAndResume(t, 0, true)
		noDuplicates(t, out)
		if err := out.Verify(); err != nil {
			t.Fatal(err)
		}
		got, want := shape(out), shape(ref)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("resumed run differs from an uninterrupted one\n got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
	t.Run("KilledInsideATool", func(t *testing.T) {
		out, _ := crashAndResume(t, 3*time.Second, false)
		noDuplicates(t, out)
		interrupted := 0
		for _, c := range out.All() {
			if c.ToolResult != nil && c.ToolResult.Error != nil && c.ToolResult.Error.Kind == session.ToolErrInterrupted {
				interrupted++
				if c.ToolResult.CallID != "b2" {
					t.Fatalf("interrupted call %s", c.ToolResult.CallID)
				}
			}
		}
		if interrupted != 1 {
			t.Fatalf("%d interrupted results\n%s", interrupted, strings.Join(shape(out), "\n"))
		}
	})
}
