package rath_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/openrath/rath"
	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// placed is echo whose own input is placed on a local sandbox (which the
// agent never opens).
func init() {
	rath.RegisterWorkflow(rath.Workflow{Name: "placed", Description: "answers once, placed", Build: func(_ context.Context, rt *rath.Runtime) (flow.Module, *session.Session, error) {
		a, err := agent.New(agent.Config{Name: "echo", Instructions: "You answer.", Model: scripted.New(model.Response{Text: "hi"}), Store: rt.Store})
		return flow.Sequential(a), session.FromUser("hello").To("local", session.Spec{Dir: os.TempDir()}), err
	}})
}

func init() {
	rath.RegisterWorkflow(rath.Workflow{Name: "stored-input", TakesInput: true, Build: func(ctx context.Context, rt *rath.Runtime) (flow.Module, *session.Session, error) {
		id, _ := rath.InputText(ctx)
		in, err := rt.Store.Load(ctx, session.ID(id))
		if err != nil {
			return nil, nil, err
		}
		a, err := agent.New(agent.Config{Name: "echo", Instructions: "You answer.", Model: scripted.New(model.Response{Text: "hi"}), Store: rt.Store})
		return flow.Sequential(a), in, err
	}})
}

func open(t *testing.T) *rath.Runtime {
	t.Helper()
	rt, err := rath.Open(context.Background(), rath.Config{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

func TestRunRecordsItsOwner(t *testing.T) {
	ctx := context.Background()
	rt := open(t)
	var run session.ID
	out, err := rt.Run(ctx, "echo", rath.OnStart(func(id session.ID) { run = id }))
	if err != nil {
		t.Fatal(err)
	}
	if anc, err := rt.Store.Ancestors(ctx, out.ID()); err != nil || !slices.Contains(anc, run) {
		t.Fatalf("run %q is not among the output's ancestors %v (%v)", run, anc, err)
	}
	info, err := rt.Store.Info(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	var o rath.Owner
	if err := jsonLabel(info, rath.OwnerLabel, &o); err != nil {
		t.Fatal(err)
	}
	if info.Status != store.StatusClosed || info.Labels[rath.RunWorkflowLabel] != "echo" || info.Labels[rath.WorkflowLabel] != "" ||
		o.PID != os.Getpid() || o.Epoch != 1 || info.Epoch != 1 || o.Lock != rath.LockFile {
		t.Fatalf("the run's input: %+v, owner %+v", info, o)
	}
	if _, err := os.Stat(o.Path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("lock file after the run: %v", err)
	}
	if got := rt.Statuses(ctx, []store.Info{info}); got[0] != store.StatusClosed {
		t.Fatalf("status %v", got)
	}
	if _, err := rt.Resume(ctx, out.ID()); !errors.Is(err, rath.ErrRunFinished) {
		t.Fatalf("resume of a finished run, by its output: %v", err)
	}
}

func TestRunInput(t *testing.T) {
	ctx := context.Background()
	rt := open(t)
	if _, err := rt.Run(ctx, "echo", rath.RunInput("x")); !errors.Is(err, rath.ErrTakesNoInput) {
		t.Fatalf("input for a workflow that takes none: %v", err)
	}
	n, err := rt.Store.Count(ctx, store.Filter{})
	if err != nil || n != 0 {
		t.Fatalf("a refused run stored %d sessions (%v)", n, err)
	}
}

func TestRunFrom(t *testing.T) {
	ctx := context.Background()
	rt := open(t)
	earlier := session.FromUser("begun elsewhere").Append(session.Assistant("and answered"))
	if err := rt.Store.Commit(ctx, earlier, ""); err != nil {
		t.Fatal(err)
	}
	var run session.ID
	out, err := rt.Run(ctx, "placed", rath.RunFrom(earlier.ID()), rath.OnStart(func(id session.ID) { run = id }))
	if err != nil {
		t.Fatal(err)
	}
	in, err := rt.Store.Load(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	if l := in.Lineage(); len(l.Parents) != 1 || l.Parents[0] != earlier.ID() {
		t.Fatalf("the fork's lineage %+v does not point at %s", l, earlier.ID())
	}
	if p := in.Placement(); p.Backend != "local" {
		t.Fatalf("a fork of an unplaced session takes the workflow's placement; got %+v", p)
	}
	msgs := out.Transcript()
	if msgs[0].Content != "begun elsewhere" || msgs[len(msgs)-1].Content != "hi" {
		t.Fatalf("output transcript %+v", msgs)
	}
	// A placed session keeps its own placement.
	docker := session.FromUser("in a container").To("docker", session.Spec{Image: "alpine"})
	if err := rt.Store.Commit(ctx, docker, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Run(ctx, "placed", rath.RunFrom(docker.ID()), rath.OnStart(func(id session.ID) { run = id })); err != nil {
		t.Fatal(err)
	}
	if in, err = rt.Store.Load(ctx, run); err != nil || in.Placement().Backend != "docker" {
		t.Fatalf("fork of a placed session: %+v, %v", in.Placement(), err)
	}
	if _, err := rt.Run(ctx, "echo", rath.RunFrom("ses_01M8B1TACYFRG9A8M9PZ96ZW58")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("run from a missing session: %v", err)
	}
}

func TestResumeRefusesOtherSessions(t *testing.T) {
	ctx := context.Background()
	rt := open(t)
	plain := session.FromUser("just a session")
	if err := rt.Store.Commit(ctx, plain, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Resume(ctx, plain.ID()); !errors.Is(err, rath.ErrNotARun) {
		t.Fatalf("resume of a plain session: %v", err)
	}
	// A cluster run (its workers take it over) is never judged
	// interrupted, nor its agents' sessions.
	crun := session.FromUser("submitted")
	if err := rt.Store.Commit(ctx, crun, ""); err != nil {
		t.Fatal(err)
	}
	if err := rt.Store.SetLabels(ctx, crun.ID(), map[string]string{"rath.cluster.kind": "run", rath.WorkflowLabel: "echo"}); err != nil {
		t.Fatal(err)
	}
	step := crun.Fork()
	if err := rt.Store.Commit(ctx, step, ""); err != nil {
		t.Fatal(err)
	}
	if err := rt.Store.SetLabel(ctx, step.ID(), runctx.Label, string(crun.ID())); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Resume(ctx, crun.ID()); !errors.Is(err, rath.ErrNotARun) || !strings.Contains(err.Error(), "cluster") {
		t.Fatalf("resume of a cluster run: %v", err)
	}
	if _, err := rt.Resume(ctx, step.ID()); !errors.Is(err, rath.ErrNotARun) {
		t.Fatalf("resume of a cluster run's session: %v", err)
	}
	infos, err := rt.Store.List(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range rt.Statuses(ctx, infos) {
		if st != infos[i].Status {
			t.Fatalf("%s judged %s", infos[i].ID, st)
		}
	}
}

// TestResumeOfARunThatHadEnded: a run whose output was stored closed, but
// whose process died before it marked the run, is only marked closed.
func TestResumeOfARunThatHadEnded(t *testing.T) {
	ctx := context.Background()
	rt := open(t)
	in := session.FromUser("hello")
	out := in.Fork().Append(session.Assistant("hi"))
	for _, s := range []*session.Session{in, out} {
		if err := rt.Store.Commit(ctx, s, ""); err != nil {
			t.Fatal(err)
		}
	}
	host, _ := os.Hostname()
	gone := rath.Owner{Host: host, PID: 1, Lock: rath.LockFile, Path: t.TempDir() + "/gone.lock", Epoch: 0}
	b, err := json.Marshal(gone)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Store.SetLabels(ctx, in.ID(), map[string]string{rath.OwnerLabel: string(b), rath.RunWorkflowLabel: "echo"}); err != nil {
		t.Fatal(err)
	}
	if err := rt.Store.SetLabels(ctx, out.ID(), map[string]string{runctx.Label: string(in.ID()), rath.WorkflowLabel: "echo"}); err != nil {
		t.Fatal(err)
	}
	for id, to := range map[session.ID]store.Status{in.ID(): store.StatusActive, out.ID(): store.StatusClosed} {
		if err := store.MoveTo(ctx, rt.Store, id, to); err != nil {
			t.Fatal(err)
		}
	}
	infos, err := rt.Store.List(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range rt.Statuses(ctx, infos) {
		if want := map[session.ID]store.Status{in.ID(): rath.StatusInterrupted, out.ID(): store.StatusClosed}[infos[i].ID]; st != want {
			t.Fatalf("%s is %s, want %s", infos[i].ID, st, want)
		}
	}
	got, err := rt.Resume(ctx, in.ID())
	if err != nil || got.ID() != out.ID() || got.Head() != out.Head() {
		t.Fatalf("resume: %v, %v", got, err)
	}
	info, err := rt.Store.Info(ctx, in.ID())
	if err != nil || info.Status != store.StatusClosed {
		t.Fatalf("the run after its resume: %+v, %v", info, err)
	}
	if n, _ := rt.Store.Count(ctx, store.Filter{}); n != 2 {
		t.Fatalf("%d sessions: the resume ran the workflow again", n)
	}
}

// TestRunOnAStoredInput: a workflow whose Build returns a stored session
// (stored-input: the one its input names) runs on a fork of it, as often
// as it likes.
func TestRunOnAStoredInput(t *testing.T) {
	ctx := context.Background()
	rt := open(t)
	stored := session.FromUser("kept")
	if err := rt.Store.Commit(ctx, stored, ""); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		var run session.ID
		if _, err := rt.Run(ctx, "stored-input", rath.RunInput(string(stored.ID())), rath.OnStart(func(id session.ID) { run = id })); err != nil {
			t.Fatal(err)
		}
		if info, err := rt.Store.Info(ctx, run); err != nil || run == stored.ID() || info.Lineage.Parents[0] != stored.ID() {
			t.Fatalf("run %s on %s: %+v, %v", run, stored.ID(), info, err)
		}
	}
	if info, err := rt.Store.Info(ctx, stored.ID()); err != nil || info.Status != store.StatusOpen || info.Labels[rath.OwnerLabel] != "" {
		t.Fatalf("the stored input was taken for a run: %+v, %v", info, err)
	}
}
