package replay

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/replay"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// demo records a run of the invoice workflow (its chunks become the start
// of the output), then replays it three ways and records each outcome as a
// note.
type demo struct {
	calc, write model.Model // the models of the recorded run and the fork
	st          store.Store
	pool        *sandbox.Pool
}

// seg is the recorded run's node-path segment: replays run under it too, so
// their node paths match the record's.
const seg = "invoice"

// Forward implements flow.Module.
func (d *demo) Forward(ctx context.Context, in *session.Session) (*session.Session, error) {
	wf, err := invoice(version{calc: d.calc, write: d.write, reply: ReplyPrompt, st: d.st, pool: d.pool})
	if err != nil {
		return in, err
	}
	rec, err := flow.Call(ctx, seg, wf, in)
	if err != nil {
		return rec, err
	}
	// The replays below are checks, not parts of this run: they run outside
	// it (no run store, so nothing they derive is committed as this run's),
	// under the recorded run's path.
	at := runctx.WithPath(runctx.WithRun(ctx, "", nil), seg)
	same, err := d.same(at, rec)
	if err != nil {
		return rec, err
	}
	changed, err := d.changed(at, rec)
	if err != nil {
		return rec, err
	}
	forked, err := d.fork(at, rec)
	if err != nil {
		return rec, err
	}
	out, err := runctx.Record(ctx, rec, runctx.Invoke(ctx, "same-code"), session.Note(same))
	if err != nil {
		return rec, err
	}
	if out, err = runctx.Record(ctx, out, runctx.Invoke(ctx, "changed-code"), session.Note(changed)); err != nil {
		return rec, err
	}
	return runctx.Record(ctx, out, runctx.Invoke(ctx, "fork"), session.Note(forked))
}

// same replays the record with the same code, whose models refuse to be
// called and whose tool counts its runs: everything is served.
func (d *demo) same(ctx context.Context, rec *session.Session) (string, error) {
	var calls, runs atomic.Int64
	wf, err := invoice(version{calc: refusing(&calls), write: refusing(&calls), reply: ReplyPrompt, runs: &runs})
	if err != nil {
		return "", err
	}
	out, err := replay.Run(ctx, wf, rec)
	if err != nil {
		return "", fmt.Errorf("replay example: the same code diverged: %w", err)
	}
	verdict := "identical"
	if out.Head() != rec.Head() {
		verdict = "NOT identical"
	}
	return fmt.Sprintf("replay.Run, same code: %s — %d chunks, head %s as recorded; %d model calls and %d tool runs (everything served from the record).",
		verdict, out.Len(), out.Head(), calls.Load(), runs.Load()), nil
}

// changed replays the record with changed code — the VAT tool now rounds
// to whole euros — re-running the tools to compare their results.
func (d *demo) changed(ctx context.Context, rec *session.Session) (string, error) {
	var calls atomic.Int64
	wf, err := invoice(version{calc: refusing(&calls), write: refusing(&calls), reply: ReplyPrompt, round: true})
	if err != nil {
		return "", err
	}
	_, err = replay.Run(ctx, wf, rec, replay.RerunTools())
	var dv *replay.Divergence
	switch {
	case err == nil:
		// Possible live: a model that answered without the tool.
		return "replay.Run, changed code (vat rounds to whole euros), tools re-run: no divergence — the record has no vat result to compare.", nil
	case !errors.As(err, &dv):
		return "", fmt.Errorf("replay example: replay with the changed code: %w", err)
	}
	// The diff's content lines: the rest (the run's duration) differs on
	// every run.
	var lines []string
	for _, l := range strings.Split(dv.Diff, "\n") {
		if strings.Contains(l, `"content"`) {
			lines = append(lines, strings.TrimSuffix(strings.Join(strings.Fields(l), " "), ","))
		}
	}
	kind := "chunk"
	if dv.Index >= 0 && dv.Index < rec.Len() {
		kind = rec.Chunk(dv.Index).Kind.String() + " chunk"
	}
	return fmt.Sprintf("replay.Run, changed code (vat rounds to whole euros), tools re-run: a *replay.Divergence at %s, recorded chunk %d: the replayed %s differs from the record. %s",
		dv.Node, dv.Index, kind, strings.Join(lines, " ")), nil
}

// fork branches the record where the writer starts and runs the rest live
// with a changed prompt: the calculation is replayed, the reply is new.
func (d *demo) fork(ctx context.Context, rec *session.Session) (string, error) {
	n := -1
	for i, c := range rec.All() {
		if strings.HasPrefix(c.Node, seg+"/reply/") {
			n = i
			break
		}
	}
	if n < 0 {
		return "", fmt.Errorf("replay example: the record has no reply")
	}
	var calls atomic.Int64
	wf, err := invoice(version{calc: refusing(&calls), write: d.write, reply: GermanReplyPrompt})
	if err != nil {
		return "", err
	}
	out, err := replay.Fork(ctx, wf, rec, n)
	if err != nil {
		return "", fmt.Errorf("replay example: fork: %w", err)
	}
	shared := 0
	for shared < min(out.Len(), rec.Len()) && out.Chunk(shared).ID == rec.Chunk(shared).ID {
		shared++
	}
	last, _ := out.Last()
	return fmt.Sprintf("replay.Fork at chunk %d (where the writer starts), reply prompt changed to %q: the first %d chunks are the record's "+
		"(the calculation, %d calls to the calculator's model), then live: %s", n, GermanReplyPrompt, shared, calls.Load(), last.Text()), nil
}
