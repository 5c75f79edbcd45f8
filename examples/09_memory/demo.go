package memory

import (
	"context"
	"fmt"
	"strings"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/tool"
)

// demo is the workflow: learn, recall in a new conversation, explain, roll
// back, recall again.
type demo struct {
	builderModel, helperModel model.Model
	tool                      tool.Tool
	mem                       memory.Memory
	store                     store.Store
	pool                      *sandbox.Pool
}

// Forward implements flow.Module. The output holds the three runs in order
// — run 1 with its remember and forget chunks, then runs 2 and 3, merged
// in — and notes telling what each step found.
func (d *demo) Forward(ctx context.Context, in *session.Session) (*session.Session, error) {
	scope := Scope(in)
	scopeKind, scopeID, _ := strings.Cut(scope, "/")
	uri := memory.URI{Scope: scopeKind, ScopeID: scopeID, Path: Path}
	builder, helper, err := d.agents(scope)
	if err != nil {
		return in, err
	}
	// 1. Learn: the builder checks the correction; its rule is remembered.
	learn := runctx.WithPath(ctx, "learn")
	run1, err := builder.Forward(learn, in)
	if err != nil {
		return run1, err
	}
	if run1, err = d.remember(learn, run1, uri); err != nil {
		return run1, err
	}
	// 2. Recall: a new conversation; the helper recalls before its first step.
	run2, err := helper.Forward(runctx.WithPath(ctx, "recall"), conversation(in))
	if err != nil {
		return run1, err
	}
	// 3. Explain from the session graph, loading the writer from the store.
	why, err := memory.Explain(ctx, d.store, run2, uri.String())
	if err != nil {
		return run1, err
	}
	// 4. Roll back everything run 1 wrote; the forget is recorded in run 1.
	if run1, err = d.rollback(learn, run1); err != nil {
		return run1, err
	}
	after, err := memory.Explain(ctx, d.store, run2, uri.String())
	if err != nil {
		return run1, err
	}
	// 5. The same question, after the rollback.
	run3, err := helper.Forward(runctx.WithPath(ctx, "after-rollback"), conversation(in))
	if err != nil {
		return run1, err
	}
	out, err := d.join(ctx, run1, run2, run3)
	if err != nil {
		return run1, err
	}
	return runctx.Record(ctx, out, runctx.Invoke(ctx, "report"),
		session.Note(learned(run1, uri.String())),
		session.Note(recalled(2, "a new conversation", run2)),
		session.Note(explained(why)),
		session.Note(rolledBack(run1, after)),
		session.Note(recalled(3, "the same question after the rollback", run3)),
	)
}

// conversation is a new conversation asking the question. Its message is
// dated like the run's input, so that a replay, which sees the same input,
// starts the same chain.
func conversation(in *session.Session) *session.Session {
	return session.New().Append(session.User(question).WithTime(in.Chunk(0).Time))
}

// join merges runs 2 and 3 into run 1, in order; the intermediate merge is
// stored, so that the stored lineage reaches all three runs.
func (d *demo) join(ctx context.Context, run1, run2, run3 *session.Session) (*session.Session, error) {
	both, err := run1.Merge(run2, session.MergeOp("memory: runs 1 and 2"))
	if err != nil {
		return nil, fmt.Errorf("memory example: %w", err)
	}
	if err := d.store.Commit(ctx, both, ""); err != nil {
		return nil, fmt.Errorf("memory example: commit %s: %w", both.ID(), err)
	}
	all, err := both.Merge(run3, session.MergeOp("memory"))
	if err != nil {
		return nil, fmt.Errorf("memory example: %w", err)
	}
	return all, nil
}

// remember writes the builder's rule, citing the user's correction and the
// successful build as evidence, into the builder's own session: the writer
// session holds the write beside its evidence.
func (d *demo) remember(ctx context.Context, run *session.Session, uri memory.URI) (*session.Session, error) {
	var fix, built session.ChunkID
	rule := ""
	for _, c := range run.All() {
		switch {
		case c.User != nil:
			fix = c.ID // the last user message: the correction
		case c.ToolResult != nil && c.ToolResult.Error == nil && strings.Contains(c.ToolResult.Content, "exit code 0"):
			built = c.ID
		case c.Assistant != nil && len(c.Assistant.ToolCalls) == 0:
			rule = c.Assistant.Text
		}
	}
	if rule == "" || fix == "" {
		return run, fmt.Errorf("memory example: the builder stated no rule to remember")
	}
	evidence := []session.ChunkID{fix}
	if built != "" {
		evidence = append(evidence, built)
	}
	return d.record(ctx, run, "remember", session.MemoryRemember, func() (*session.Session, error) {
		return d.mem.Remember(ctx, run, memory.Entry{URI: uri, Content: rule,
			Provenance: memory.Provenance{Evidence: evidence, Kind: memory.EvidenceHuman, Agent: "builder"}})
	})
}

// rollback forgets every entry run wrote, recorded in run.
func (d *demo) rollback(ctx context.Context, run *session.Session) (*session.Session, error) {
	return d.record(ctx, run, "rollback", session.MemoryForget, func() (*session.Session, error) {
		_, w, err := d.mem.Forget(ctx, run, memory.DerivedFrom(run.ID()))
		return w, err
	})
}

// record does a memory operation through run, re-appends the chunk it
// recorded under this step's node (through runctx.Record, so that a replay
// checks it), and commits run over its stored head. Under a replay whose
// record holds the operation, the recorded chunk is served and memory is
// left alone: memory may have changed since (this example's rollback
// changes it), and the record says what the run did.
func (d *demo) record(ctx context.Context, run *session.Session, step string, op session.MemoryOp, do func() (*session.Session, error)) (*session.Session, error) {
	node := runctx.Invoke(ctx, step)
	out, served, err := runctx.Served(ctx, run, node, func(c session.Chunk) bool { return c.Memory != nil && c.Memory.Op == op })
	if err != nil {
		return run, err
	}
	if !served {
		w, err := do()
		if err != nil {
			return run, fmt.Errorf("memory example: %s: %w", step, err)
		}
		if out, err = runctx.Adopt(ctx, w, run.Len(), node); err != nil {
			return run, err
		}
	}
	if err := d.store.Commit(ctx, out, run.Head()); err != nil {
		return run, fmt.Errorf("memory example: commit %s: %w", out.ID(), err)
	}
	return out, nil
}
