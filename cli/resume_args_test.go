package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath"
	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

// argHolder is a workflow whose parameter "dir" names a directory: its
// agent calls hold twice; the first call, while <dir>/block exists,
// writes <dir>/holding and waits until its process is killed.
var argHolder = rath.Workflow{Name: "arg-holder", Description: "holds inside a tool call",
	Params: []rath.Param{{Name: "dir", Required: true}},
	Build: func(ctx context.Context, rt *rath.Runtime) (flow.Module, *session.Session, error) {
		dir := rath.Arg(ctx, "dir")
		if dir == "" {
			return nil, nil, errors.New("arg-holder was built without its dir parameter")
		}
		hold := tool.MustFunc("hold", "Hold.", func(ctx context.Context, _ struct{}) (string, error) {
			if _, err := os.Stat(filepath.Join(dir, "block")); err == nil {
				os.WriteFile(filepath.Join(dir, "holding"), nil, 0o600)
				<-ctx.Done()
				return "", ctx.Err()
			}
			return "held", nil
		})
		m := scripted.Func(func(_ context.Context, req *model.Request) (model.Response, error) {
			if req.Messages[len(req.Messages)-1].Role == session.RoleTool {
				return model.Response{Text: "held in " + filepath.Base(dir)}, nil
			}
			return model.Response{ToolCalls: []session.ToolCall{session.NewToolCall("h1", "hold", `{}`)}}, nil
		})
		a, err := agent.New(agent.Config{Name: "holder", Instructions: "Hold in " + dir + ".", Model: m, Tools: []tool.Tool{hold}, Store: rt.Store})
		return a, session.FromUser("hold on"), err
	}}

func init() { rath.RegisterWorkflow(argHolder) }

// TestArgHolderChild is the process TestResumeWithArgs kills; it runs only
// when that test starts it.
func TestArgHolderChild(t *testing.T) {
	home, dir := os.Getenv("RATH_ARG_CHILD_HOME"), os.Getenv("RATH_ARG_CHILD_DIR")
	if home == "" {
		t.Skip("started by TestResumeWithArgs")
	}
	Run(context.Background(), []string{"--home", home, "run", "arg-holder", "--arg", "dir=" + dir}, strings.NewReader(""), os.Stdout, os.Stderr)
	t.Fatal("the run ended instead of holding")
}

// TestResumeWithArgs: `rath resume` builds an interrupted run's workflow
// with the parameters the run was given.
func TestResumeWithArgs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	home, dir := filepath.Join(t.TempDir(), "home"), t.TempDir()
	t.Setenv("RATH_HOME", home) // the runtime sets it; restore it after
	if err := os.WriteFile(filepath.Join(dir, "block"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	child := exec.Command(os.Args[0], "-test.run=^TestArgHolderChild$")
	child.Env = append(os.Environ(), "RATH_ARG_CHILD_HOME="+home, "RATH_ARG_CHILD_DIR="+dir)
	var errb bytes.Buffer
	child.Stderr = &errb
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "holding")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			child.Process.Kill()
			child.Wait()
			t.Fatalf("the run never held:\n%s", errb.String())
		}
	}
	child.Process.Kill()
	child.Wait()
	m := regexp.MustCompile(`run arg-holder (ses_\w+)`).FindStringSubmatch(errb.String())
	if m == nil {
		t.Fatalf("the run did not name itself on stderr:\n%s", errb.String())
	}
	if err := os.Remove(filepath.Join(dir, "block")); err != nil {
		t.Fatal(err)
	}

	// The call the kill cut short is not made again unsettled.
	code, _, errs := rathIn(t, home, "", "resume", m[1])
	if code != 1 || !strings.Contains(errs, "needs a review") || !strings.Contains(errs, "review "+m[1]+" --happened") {
		t.Fatalf("rath resume %s of a run cut inside a call: exit %d\n%s", m[1], code, errs)
	}
	if ls := rathOK(t, home, "ls", "--status", "needs_review"); !strings.Contains(ls, m[1]) {
		t.Fatalf("rath ls --status needs_review:\n%s", ls)
	}
	// Settled as not happened, the call is made again, and the run goes
	// on here.
	out := rathOK(t, home, "review", m[1], "--not-happened", "--reason", "the tool never got past its block")
	if !strings.HasPrefix(out, "answer     held in "+filepath.Base(dir)+"\n") {
		t.Fatalf("rath review %s:\n%s", m[1], out)
	}
	if code, _, errs := rathIn(t, home, "", "review", m[1], "--happened"); code != 1 || !strings.Contains(errs, "waits for no review") {
		t.Fatalf("a second review: exit %d\n%s", code, errs)
	}
}
