package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/openrath/rath/policy"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

// dispatch runs one step's tool calls and records their results in call
// order. A call waits only for earlier calls whose resources conflict with
// its own (a write to a path excludes reads and writes of the path, its
// ancestors and descendants; commands exclude everything): every wait
// points to an earlier call, so no set of calls can deadlock, and there is
// no bounded pool to exhaust.
func (r *run) dispatch(step int, calls []session.ToolCall, refused map[string]session.ToolResult) error {
	n := len(calls)
	res := make([]session.ToolResult, n)
	settled := make([]bool, n) // refused, or served by a replay: not run
	for i, c := range calls {
		res[i], settled[i] = refused[c.ID]
		if ru, ok := r.rulings[c.ID]; ok && !settled[i] && ru.effect == policy.Deny {
			res[i], settled[i] = deniedResult(c, ru), true
		}
	}
	recorded, err := r.served(calls, res, settled)
	if err != nil {
		return err
	}
	var run []int // the calls to run: all but the settled ones
	for i, done := range settled {
		if !done {
			run = append(run, i)
		}
	}
	if len(run) > 0 {
		if err := r.openSandbox(); err != nil {
			return err
		}
		if err := r.markStarted(calls, run); err != nil {
			return err
		}
	}
	rsrc := make([][]tool.Resource, n) // what the calls that run touch
	for _, i := range run {
		if t := r.a.tools[calls[i].Name]; t != nil && calls[i].ArgsValid() {
			rsrc[i] = t.Resources(calls[i].Args)
		}
	}
	for i := range calls {
		c := calls[i]
		if !r.emit(Event{Kind: ToolCallStart, Step: step, Call: &c}) {
			return nil
		}
	}
	env := tool.Env{Session: r.s}
	if r.lease != nil {
		env.Sandbox = r.lease.Sandbox
		if r.pol != nil {
			r.egressFacts = r.facts(policy.KindEgress) // once, before the calls run concurrently
		}
	}
	cut := r.runCalls(env, calls, rsrc, res, run)
	if err := r.unheld(); err != nil {
		return err // a call was not started: nothing of the step is recorded
	}
	for i := range res {
		if cut != nil && cut[i] {
			continue // cut short by a stop: its effect is unknown, it has no result
		}
		var rec *session.ToolResult // the record's own result, as the player gave it
		if recorded != nil {
			rec = recorded[i]
		}
		if err := r.addResult(&res[i], rec); err != nil {
			return err
		}
		if !r.emit(Event{Kind: ToolCallEnd, Step: step, Result: &res[i]}) {
			return nil
		}
	}
	if slices.Contains(cut, true) {
		return runctx.ErrInterrupted
	}
	return nil
}

// served settles the calls a replay's record holds results for, writing
// them to res; recorded holds the player's own results, to append as
// given. A call the record shows made but never finished runs again if its
// tool is idempotent; otherwise a review recorded after the turn settles it
// (consumed here, so the replayed chain holds it too), or, without one, the
// run stops for review (runctx.WithReview) or the model is given an
// interrupted error.
func (r *run) served(calls []session.ToolCall, res []session.ToolResult, settled []bool) (recorded []*session.ToolResult, err error) {
	if r.player == nil {
		return nil, nil
	}
	s, _, err := runctx.Served(r.ctx, r.s, r.node, func(c session.Chunk) bool {
		return c.Approval != nil && (session.IsReview(c.Approval.Verdict) || c.Approval.Verdict == session.VerdictStarted) &&
			slices.ContainsFunc(calls, func(tc session.ToolCall) bool { return tc.ID == c.Approval.CallID })
	})
	r.s = s
	if err != nil {
		return nil, err
	}
	recorded = make([]*session.ToolResult, len(calls))
	var unsettled []session.ToolCall
	for i, c := range calls {
		if settled[i] {
			continue
		}
		rec, issued := r.player.Tool(r.node, c)
		switch {
		case rec != nil:
			res[i], settled[i], recorded[i] = *rec, true, rec
		case issued:
			if t := r.a.tools[c.Name]; t != nil && t.Idempotent() {
				continue
			}
			if a := settledBy(r.s, c.ID); a != nil && !startedSinceReview(r.s, c.ID) {
				rr, ok, err := reviewed(a, c)
				if err != nil {
					return nil, err
				}
				if ok {
					res[i], settled[i] = rr, true
				}
				continue
			}
			if approvedNotStarted(r.s, c.ID) {
				continue // approved after the record's pause, never begun: it runs now
			}
			if runctx.ReviewRequired(r.ctx) {
				unsettled = append(unsettled, c)
				continue
			}
			res[i], settled[i] = session.ToolResult{CallID: c.ID, Tool: c.Name, Args: c.Args, Error: &session.ToolError{Kind: session.ToolErrInterrupted,
				Message: "the run stopped while this call ran; it was not repeated (the tool is not idempotent) and its effect is unknown"}}, true
		}
	}
	if len(unsettled) > 0 {
		return nil, &Unsettled{Session: r.s.ID(), Node: r.node, Calls: unsettled}
	}
	return recorded, nil
}

// runCalls runs the calls at indexes idx, each after the earlier ones it
// conflicts with; a lone call runs inline (the common case: nothing to
// schedule).
// It reports, by call, those a stop cut short (runctx.WithStop): not
// started, or cancelled past the grace period, their effect unknown.
func (r *run) runCalls(env tool.Env, calls []session.ToolCall, rsrc [][]tool.Resource, res []session.ToolResult, idx []int) []bool {
	var cut []bool
	var mu sync.Mutex
	one := func(i int) {
		if !r.runOne(env, calls, rsrc, res, i) {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if cut == nil {
			cut = make([]bool, len(calls))
		}
		cut[i] = true
	}
	if len(idx) == 1 {
		one(idx[0])
		return cut
	}
	r.runConcurrently(idx, rsrc, one)
	return cut
}

// runOne runs call i and reports whether a stop cut it short.
func (r *run) runOne(env tool.Env, calls []session.ToolCall, rsrc [][]tool.Resource, res []session.ToolResult, i int) bool {
	env.CallID = calls[i].ID
	env.IdempotencyKey = idempotencyKey(runctx.ID(r.ctx), r.node, calls[i].ID)
	env.Notes = new(tool.Notes) // this call's own
	var short bool
	res[i], short = r.callStoppable(env, calls[i], rsrc[i])
	return short
}

// callStoppable runs one call under a run that may be asked to stop: a
// call not yet begun when the run was abandoned does not start, one that
// fails once it was abandoned, or whose context the abandonment cancelled,
// has an unknown effect; both are cut short. (A tool may answer its
// cancellation as if it had run: run_command reports the exit code of the
// process the cancellation killed. That answer is the stop's, not the
// tool's.)
func (r *run) callStoppable(env tool.Env, c session.ToolCall, rs []tool.Resource) (session.ToolResult, bool) {
	if runctx.Abandoned(r.ctx) {
		return session.ToolResult{}, true
	}
	ctx, cancel := runctx.UntilAbandoned(r.ctx)
	defer cancel()
	out := r.call(ctx, env, c, rs)
	if runctx.Abandoned(r.ctx) && r.ctx.Err() == nil && (out.Error != nil || ctx.Err() != nil) {
		return out, true
	}
	return out, false
}

// runConcurrently runs one(i) for each call index i in idx, each after the
// earlier ones whose resources conflict with its own.
func (r *run) runConcurrently(idx []int, rsrc [][]tool.Resource, one func(i int)) {
	done := make([]chan struct{}, len(idx)) // by position in idx
	var wg sync.WaitGroup
	for k, i := range idx {
		done[k] = make(chan struct{})
		var deps []chan struct{}
		for m, j := range idx[:k] {
			if tool.ConflictAny(rsrc[i], rsrc[j]) {
				deps = append(deps, done[m])
			}
		}
		finished := done[k]
		wg.Go(func() {
			defer close(finished)
			for _, d := range deps {
				<-d
			}
			one(i)
		})
	}
	wg.Wait()
}

// openSandbox leases the session's sandbox once per run, if it is placed.
func (r *run) openSandbox() error {
	if r.lease != nil || r.s.Placement().Backend == "" {
		return nil
	}
	n := r.s.Len()
	l, s, err := r.a.cfg.Sandboxes.Acquire(r.ctx, r.s)
	if err != nil {
		return fmt.Errorf("agent %s: sandbox: %w", r.a.cfg.Name, err)
	}
	r.lease, r.s = l, s
	if err := r.adopt(n); err != nil {
		return err
	}
	if j := runctx.Journal(r.ctx); j != nil {
		if err := j.Opened(r.ctx, r.s, l.Sandbox); err != nil {
			return fmt.Errorf("agent %s: workspace journal: %w", r.a.cfg.Name, err)
		}
	}
	return nil
}

// call runs one tool call under ctx (the run's, or one a stop cancels)
// and returns its evidence.
func (r *run) call(rctx context.Context, env tool.Env, c session.ToolCall, rs []tool.Resource) session.ToolResult {
	out := session.ToolResult{CallID: c.ID, Tool: c.Name, Args: c.Args}
	if env.Sandbox != nil {
		out.SandboxID = env.Sandbox.ID()
	}
	t := r.a.tools[c.Name]
	switch {
	case t == nil:
		out.Error = &session.ToolError{Kind: session.ToolErrUnknownTool, Message: fmt.Sprintf("no tool named %q is offered", c.Name)}
		return out
	case !c.ArgsValid():
		out.Error = &session.ToolError{Kind: session.ToolErrInvalidArgs, Message: fmt.Sprintf("the arguments are not valid JSON: %.200q", c.ArgsText)}
		return out
	}
	ru := r.rulings[c.ID]
	if why := ru.refusal(rs, c.Args); why != "" {
		out.Error = &session.ToolError{Kind: session.ToolErrPolicy, Message: "refused by the policy's constraints (" + why + "): " + ru.why}
		return out
	}
	if err := r.a.cfg.Policy.Check(&r.counter, c.Name, c.Args, rs); err != nil {
		out.Error = &session.ToolError{Kind: tool.KindOf(err), Message: err.Error()}
		return out
	}
	if !t.Idempotent() {
		if err := r.checkHolder(); err != nil {
			out.Error = &session.ToolError{Kind: session.ToolErrInterrupted, Message: "not started: " + err.Error()}
			return out
		}
	}
	var mark *sandbox.Mark
	if env.Sandbox != nil && writes(rs) {
		mark, _ = env.Sandbox.Mark(r.ctx) // no mark, no effects: the call still runs
	}
	var conns *connLog
	if env.Sandbox != nil {
		conns = new(connLog)
		env.Sandbox = &egressSandbox{Sandbox: env.Sandbox, decide: r.connDecider(r.egressFacts, t, c, ru), log: conns,
			refuse: egressRefusal(env.Sandbox, r.s.Placement().Spec, ru.limits.AllowedHosts)}
	}
	ctx, cancel := ru.within(rctx)
	start := time.Now()
	content, err := t.Call(ctx, env, c.Args)
	out.Duration = time.Since(start)
	timedOut := err != nil && errors.Is(context.Cause(ctx), errPolicyTimeout) && rctx.Err() == nil
	cancel()
	out.Notes = env.Notes.List()
	if conns != nil {
		var note *session.ToolNote
		if out.Egress, note = conns.evidence(); note != nil {
			out.Notes = withNote(out.Notes, *note)
		}
	}
	limit, why := r.a.cfg.ResultLimit, ""
	if m := ru.limits.MaxOutputBytes; m > 0 && m < limit {
		limit, why = m, fmt.Sprintf("; max_output_bytes %d set by %s", m, ru.why)
	}
	switch {
	case timedOut:
		out.Error = &session.ToolError{Kind: session.ToolErrTimeout, Message: fmt.Sprintf("stopped by %v: %v", context.Cause(ctx), err)}
	case err != nil:
		out.Error = &session.ToolError{Kind: tool.KindOf(err), Message: err.Error()}
	default:
		out.Content, out.FullSize, out.FullHash = truncate(content, limit)
		if out.FullSize > 0 {
			out.Notes = withNote(out.Notes, session.NewToolNote(session.ToolNoteTruncated,
				fmt.Sprintf("%d of %d bytes shown%s", len(out.Content), out.FullSize, why)))
		}
	}
	if mark != nil {
		if eff, err := env.Sandbox.Effects(context.WithoutCancel(r.ctx), mark); err == nil {
			out.Effects = effectsOf(eff, rs)
		}
	}
	return out
}

func writes(rs []tool.Resource) bool {
	for _, x := range rs {
		if x.Access != tool.Read {
			return true
		}
	}
	return false
}

// truncate cuts content to limit bytes (on a rune boundary), returning the
// full size and hash when it did. The cut content is the tool's output up
// to the cut, nothing added: the remark about the cut is a note of its own
// (session.ToolNoteTruncated), which the model is shown apart from the
// content (session.Message.Notes), so that it knows the result is partial.
func truncate(s string, limit int) (string, int64, string) {
	if len(s) <= limit {
		return s, 0, ""
	}
	sum := sha256.Sum256([]byte(s))
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], int64(len(s)), "sha256:" + hex.EncodeToString(sum[:])
}

// withNote appends n to notes, making room for it (the runtime's note
// outranks the last of a tool's own) if notes are at session.MaxToolNotes.
func withNote(notes []session.ToolNote, n session.ToolNote) []session.ToolNote {
	if len(notes) >= session.MaxToolNotes {
		notes = notes[:session.MaxToolNotes-1]
	}
	return append(notes, n)
}

// effectsOf keeps the changes a call could have made: all of them for a
// command (it runs alone), those under its written paths otherwise.
func effectsOf(e sandbox.Effects, rs []tool.Resource) []session.FileEffect {
	exclusive := false
	var paths []string
	for _, x := range rs {
		switch {
		case x.Access == tool.Exclusive:
			exclusive = true
		case x.Access == tool.Write && strings.HasPrefix(x.Key, "path:"):
			paths = append(paths, strings.TrimPrefix(x.Key, "path:"))
		}
	}
	keep := func(p string) bool {
		if exclusive {
			return true
		}
		for _, w := range paths {
			if w == "" || w == "." || p == w || strings.HasPrefix(p, w+"/") {
				return true
			}
		}
		return false
	}
	var out []session.FileEffect
	add := func(op string, fs []sandbox.FileEffect) {
		for _, f := range fs {
			if keep(f.Path) {
				out = append(out, session.FileEffect{Path: f.Path, Op: op, Before: f.Before, After: f.After, Size: f.Size, Diff: f.Diff, Binary: f.Binary})
			}
		}
	}
	add(session.EffectAdded, e.Added)
	add(session.EffectModified, e.Modified)
	add(session.EffectDeleted, e.Deleted)
	return out
}

// idempotencyKey names a call for good: its run, its node and its id (the
// model's, recorded with the turn, so a resumed run repeats it).
func idempotencyKey(run session.ID, node, callID string) string {
	h := sha256.Sum256([]byte(string(run) + "\x00" + node + "\x00" + callID))
	return "idem_" + hex.EncodeToString(h[:16])
}
