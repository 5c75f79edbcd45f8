package replay_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/replay"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store/sqlite"
)

var errCrash = errors.New("crash")

// TestResumeInputCommittedInPlace resumes a run whose first module commits
// what it adds onto the run's input session itself (as a checkout note
// does) and whose process then died: the resumed run starts from the input
// it was given, the note is served from the record once, and the agent's
// request is the recorded one.
func TestResumeInputCommittedInPlace(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "s.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	crash := true
	prepare := flow.Func(func(ctx context.Context, s *session.Session) (*session.Session, error) {
		s, err := runctx.Record(ctx, s, runctx.Invoke(ctx, "prepare"), session.Note("the workspace is ready"))
		if err != nil {
			return s, err
		}
		info, err := st.Info(ctx, s.ID())
		if err != nil {
			return s, err
		}
		if info.Head != s.Head() {
			if err := st.Commit(ctx, s, info.Head); err != nil {
				return s, err
			}
		}
		return s, nil
	})
	calls := 0
	m := scripted.Func(func(ctx context.Context, req *model.Request) (model.Response, error) {
		calls++
		if crash {
			return model.Response{}, errCrash
		}
		return model.Response{Text: "done"}, nil
	})
	a, err := agent.New(agent.Config{Name: "a", Model: m, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	wf := flow.Sequential(prepare, a)
	in := session.FromUser("go")
	if _, err := flow.Run(ctx, st, wf, in); !errors.Is(err, errCrash) {
		t.Fatalf("the first run: %v", err)
	}
	stored, err := st.Load(ctx, in.ID())
	if err != nil || stored.Len() != in.Len()+1 {
		t.Fatalf("the stored input after the first run: %v, %v", stored, err)
	}
	crash = false
	out, err := replay.Resume(ctx, wf, st, in.ID())
	if err != nil {
		t.Fatal(err)
	}
	notes := 0
	for _, c := range out.All() {
		if c.Note != nil {
			notes++
		}
	}
	if notes != 1 {
		t.Fatalf("the resumed output has %d notes:\n%v", notes, out.Transcript())
	}
	if err := out.Verify(); err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Fatalf("%d model calls", calls)
	}
}
