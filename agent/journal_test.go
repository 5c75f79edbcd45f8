package agent

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/sqlite"
	"github.com/openrath/rath/tool/builtin"
)

// journalSpy records what an agent reports, and what the store held then.
type journalSpy struct {
	st      store.Store
	opened  []string
	changed [][]string
	stored  []int // the session's stored length at each Changed
	lens    []int // its length in memory then
}

func (j *journalSpy) Opened(ctx context.Context, s *session.Session, sb sandbox.Sandbox) error {
	j.opened = append(j.opened, sb.ID())
	return nil
}

func (j *journalSpy) Changed(ctx context.Context, s *session.Session, sb sandbox.Sandbox, calls []string, eff []session.FileEffect) error {
	j.changed = append(j.changed, calls)
	n := 0
	if info, err := j.st.Info(ctx, s.ID()); err == nil {
		n = info.Len
	}
	j.stored, j.lens = append(j.stored, n), append(j.lens, s.Len())
	return nil
}

// An agent reports the sandbox it opens, and each step that changed its
// workspace before that step's results are committed; steps that only
// read report nothing.
func TestWorkspaceJournal(t *testing.T) {
	t.Setenv("RATH_HOME", t.TempDir())
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "r.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m := scripted.New(
		model.Response{ToolCalls: []session.ToolCall{call("w1", "write_file", `{"path":"a.txt","content":"one\n"}`)}},
		model.Response{ToolCalls: []session.ToolCall{call("r1", "read_file", `{"path":"a.txt"}`)}},
		model.Response{ToolCalls: []session.ToolCall{call("w2", "write_file", `{"path":"b.txt","content":"two\n"}`)}},
		model.Response{Text: "done"},
	)
	a, err := New(Config{Name: "writer", Instructions: "Write.", Model: m, Tools: builtin.Default(), Store: st})
	if err != nil {
		t.Fatal(err)
	}
	j := &journalSpy{st: st}
	in := session.FromUser("write two files").To("local", session.Spec{})
	var out *session.Session
	for ev, err := range a.Run(runctx.WithWorkspaceJournal(ctx, j), in) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == Done {
			out = ev.Session
		}
	}
	if len(j.opened) != 1 || j.opened[0] == "" {
		t.Fatalf("opened = %v, want the one sandbox", j.opened)
	}
	if want := [][]string{{"w1"}, {"w2"}}; !slices.EqualFunc(j.changed, want, slices.Equal) {
		t.Fatalf("changed = %v, want %v", j.changed, want)
	}
	for i := range j.changed {
		if j.stored[i] >= j.lens[i] {
			t.Fatalf("step %d was reported after its results were committed (stored %d of %d chunks)", i, j.stored[i], j.lens[i])
		}
	}
	if out == nil {
		t.Fatal("no output")
	}
}
