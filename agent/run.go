package agent

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/policy"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/tool"
)

// Run runs the agent on s, yielding events as they happen; the last is
// Done with the output session, or an error (with the session so far in
// the event). The consumer sets the pace of this run only: runs do not
// share anything a slow consumer could hold up.
func (a *Agent) Run(ctx context.Context, s *session.Session) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		node := runctx.Invoke(ctx, a.node)
		r := &run{a: a, ctx: ctx, yield: yield, s: s.Derive(node, runctx.ResumesAt(ctx, node)), node: node, player: runctx.PlayerFrom(ctx), pol: a.decider(ctx)}
		defer r.release()
		r.loop()
	}
}

type run struct {
	a       *Agent
	ctx     context.Context
	yield   func(Event, error) bool
	s       *session.Session
	stored  session.ChunkID // the head last committed ("" before the first)
	stopped bool            // the consumer stopped listening
	lease   *sandbox.Lease
	counter tool.Counter      // calls against the policy
	node    string            // this run's node path
	player  runctx.Player     // replay's record, nil when live
	conv    conversation      // the request messages so far
	adding  []session.Chunk   // add's buffer
	pol     policy.Decider    // decides the run's actions (nil: none)
	scope   *store.Scope      // the run's tenant and project, once asked
	rulings map[string]ruling // the policy's rulings on this step's calls, by call id
	held    heldCheck         // the run's holder check before effects (holder.go)
	// egressFacts are the run's facts for the egress actions of the
	// connections its calls' commands open (egress.go).
	egressFacts policy.Action
}

// add appends chunks made by this run, through the player if replaying.
func (r *run) add(cs ...session.Chunk) error {
	// Through a buffer of the run's: the chunks go on to an interface
	// call, which would put every step's argument list on the heap.
	r.adding = append(r.adding[:0], cs...)
	s, err := runctx.Record(r.ctx, r.s, r.node, r.adding...)
	clear(r.adding)
	r.s = s
	return err
}

// addTurn adds a model call and the turn it answered. (Its own function,
// not inlined, so that the chunks are built in its frame: a run's frames
// stay on the goroutine's stack for the whole run, and a stack kept under
// 8 KiB is neither copied to grow nor as long to scan.)
//
//go:noinline
func (r *run) addTurn(rec *session.ModelCall, resp *model.Response) error {
	return r.add(session.Of(rec), session.Of(ptr(resp.Turn())))
}

// addResult adds a call's result: the player's own if it served one.
//
//go:noinline
func (r *run) addResult(res *session.ToolResult, recorded *session.ToolResult) error {
	if recorded != nil {
		return r.add(session.Of(recorded))
	}
	return r.add(session.Result(*res))
}

// adopt re-appends chunks others appended to r.s since it had n chunks
// (memory and sandbox operations) as r's own: with its node, and through
// the player when replaying.
func (r *run) adopt(n int) error {
	s, err := runctx.Adopt(r.ctx, r.s, n, r.node)
	r.s = s
	return err
}

func (r *run) emit(ev Event) bool {
	if r.stopped {
		return false
	}
	if !r.yield(ev, nil) {
		r.stopped = true
	}
	return !r.stopped
}

// fail records err as an error chunk, commits, and reports it.
func (r *run) fail(code string, err error) {
	if aerr := r.add(session.Fail(code, err.Error())); aerr != nil {
		// The record disagrees (a divergence): keep the failure anyway.
		r.s = r.s.Append(session.Fail(code, err.Error()).WithNode(r.node))
	}
	if cerr := r.commit(context.WithoutCancel(r.ctx)); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if !r.stopped {
		r.yield(Event{Kind: Done, Session: r.s}, err)
	}
}

func (r *run) loop() {
	if in := r.a.cfg.Instructions; in != "" && !r.hasInstructions() {
		if err := r.add(session.System(in)); err != nil {
			r.fail("replay", err)
			return
		}
	}
	if err := r.recall(); err != nil {
		r.fail("memory", err)
		return
	}
	if err := r.commit(r.ctx); err != nil {
		r.yield(Event{Kind: Done, Session: r.s}, err)
		return
	}
	r.steps(1)
}

// steps runs model calls from step first on.
func (r *run) steps(first int) {
	for step := first; step <= r.a.cfg.MaxSteps; step++ {
		if !r.emit(Event{Kind: StepStart, Step: step}) {
			return
		}
		resp, rec, err := r.callModel(step)
		if r.stopped {
			return
		}
		if errors.Is(err, runctx.ErrYielded) {
			// Everything so far is committed; nothing is recorded about
			// the stop, so the run resumes as if it had not happened.
			r.yield(Event{Kind: Done, Session: r.s}, err)
			return
		}
		if err != nil {
			r.fail(failureCode(err), err)
			return
		}
		if err := r.addTurn(rec, resp); err != nil {
			r.fail("replay", err)
			return
		}
		if err := r.decideCalls(resp.ToolCalls); err != nil {
			r.fail("replay", err)
			return
		}
		u := resp.Usage
		if !r.emit(Event{Kind: Usage, Step: step, Usage: &u}) {
			return
		}
		if len(resp.ToolCalls) == 0 {
			if err := r.memorize(); err != nil {
				r.fail("memory", err)
				return
			}
			if err := r.commit(r.ctx); err != nil {
				r.yield(Event{Kind: Done, Session: r.s}, err)
				return
			}
			r.emit(Event{Kind: Done, Step: step, Session: r.s})
			return
		}
		if r.needsApproval(resp.ToolCalls) {
			refused, decided := r.pause(resp.ToolCalls)
			if !decided || !r.toolStep(step, resp.ToolCalls, refused) {
				return
			}
			continue
		}
		// Calls to tools that must not run twice are durable before they
		// run: a run cut short meanwhile is resumed knowing the call was
		// made (an idempotent tool is simply run again).
		if r.store() != nil && !r.allIdempotent(resp.ToolCalls) {
			if err := r.commit(r.ctx); err != nil {
				r.yield(Event{Kind: Done, Session: r.s}, err)
				return
			}
		}
		if !r.toolStep(step, resp.ToolCalls, nil) {
			return
		}
	}
	r.fail("max_steps", fmt.Errorf("%w: %d model calls without a final answer", ErrMaxSteps, r.a.cfg.MaxSteps))
}

// toolStep dispatches a step's calls (refused ones get their given
// results), commits, and reports whether the loop goes on.
func (r *run) toolStep(step int, calls []session.ToolCall, refused map[string]session.ToolResult) bool {
	from := r.s.Len()
	if err := r.dispatch(step, calls, refused); err != nil {
		if r.unheld() != nil {
			// The process lost the run before a call began: nothing is
			// recorded (its holder goes on from the record).
			r.yield(Event{Kind: Done, Session: r.s}, err)
			return false
		}
		var u *Unsettled
		if errors.As(err, &u) {
			// Stop, committed up to the calls' turn, for a person to
			// settle them; nothing is recorded about the stop.
			if cerr := r.commit(r.ctx); cerr != nil {
				err = errors.Join(err, cerr)
			}
			u.Head = r.s.Head()
			r.yield(Event{Kind: Done, Session: r.s}, err)
			return false
		}
		if errors.Is(err, runctx.ErrInterrupted) {
			// The results known are committed; a call cut short has none.
			if cerr := r.commit(context.WithoutCancel(r.ctx)); cerr != nil {
				err = errors.Join(err, cerr)
			}
			r.yield(Event{Kind: Done, Session: r.s}, err)
			return false
		}
		r.fail(failureCode(err), err)
		return false
	}
	if r.stopped {
		return false
	}
	if err := r.journalStep(from); err != nil {
		r.yield(Event{Kind: Done, Session: r.s}, fmt.Errorf("agent %s: workspace journal: %w", r.a.cfg.Name, err))
		return false
	}
	if err := r.commit(r.ctx); err != nil {
		r.yield(Event{Kind: Done, Session: r.s}, err)
		return false
	}
	if err := r.ctx.Err(); err != nil {
		r.fail(session.ToolErrCanceled, err)
		return false
	}
	return true
}

func ptr[T any](v T) *T { return &v }

func failureCode(err error) string {
	switch {
	case errors.Is(err, errPolicyTimeout):
		return session.ToolErrTimeout
	case errors.Is(err, model.ErrBudgetExceeded):
		return "budget"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return session.ToolErrCanceled
	case errors.Is(err, ErrAborted):
		return "aborted"
	case errors.Is(err, policy.ErrDenied):
		return session.ToolErrPolicy
	}
	return "model"
}

// hasInstructions reports whether the session already holds this agent's
// instructions (a resumed run).
func (r *run) hasInstructions() bool {
	for _, c := range r.s.All() {
		if c.System != nil && c.Node == r.node && c.System.Text == r.a.cfg.Instructions {
			return true
		}
	}
	return false
}

// request builds the model request: the transcript with this agent's
// instructions first.
func (r *run) request() *model.Request {
	if r.conv.prev == nil {
		// A step adds a turn and, mostly, one result.
		r.conv.prev, r.conv.room = r.a.seed, min(2*r.a.cfg.MaxSteps+1, 256)
	}
	return r.conv.request(r.s, r.a.cfg.Instructions, r.a.specs, r.a.cfg.Params)
}

// callModel streams one model call, passing text and reasoning on, and
// returns the response with its model_call record. A replay's player may
// serve the call from the record instead.
func (r *run) callModel(step int) (*model.Response, *session.ModelCall, error) {
	before := r.s.Len()
	ru, err := r.decideModel(step)
	if err != nil {
		return nil, nil, err
	}
	req := r.request()
	if r.player != nil {
		rec, err := r.player.Model(r.node, req)
		if err != nil {
			return nil, nil, err
		}
		if rec != nil {
			return responseOf(rec), rec, nil
		}
	}
	if runctx.SliceOver(r.ctx) {
		// The step will be taken again, and decided again then.
		r.rewind(before)
		return nil, nil, runctx.ErrYielded
	}
	if runctx.Stopping(r.ctx) {
		r.rewind(before)
		return nil, nil, runctx.ErrInterrupted
	}
	// A model call has no effect: a stop cuts it, and the step is taken
	// again on resume.
	sctx, scancel := runctx.UntilStopping(r.ctx)
	defer scancel()
	ctx, cancel := ru.within(sctx)
	defer cancel()
	var resp *model.Response
	for ev, err := range r.a.cfg.Model.Stream(ctx, req) {
		if err != nil && runctx.Stopping(r.ctx) && r.ctx.Err() == nil {
			r.rewind(before)
			return nil, nil, runctx.ErrInterrupted
		}
		if err != nil {
			if cause := context.Cause(ctx); errors.Is(cause, errPolicyTimeout) && r.ctx.Err() == nil {
				err = fmt.Errorf("%w: %w", cause, err)
			}
			// Record the failed call's attempts as evidence.
			if at := model.AttemptsOf(err); len(at) > 0 {
				r.s = r.s.Append(session.Of(&session.ModelCall{Provider: r.a.cfg.Model.Provider(), Model: r.a.cfg.Model.Name(),
					Params: req.Record(), RequestDigest: req.Digest(), Parts: req.Parts(), Stream: true, Attempts: at}).WithNode(r.node))
			}
			return nil, nil, err
		}
		if ev.Kind == model.EventDone {
			resp = ev.Response
			continue
		}
		if e, ok := fromModel(step, ev); ok && !r.emit(e) {
			return nil, nil, context.Canceled
		}
	}
	if resp == nil {
		return nil, nil, fmt.Errorf("%w: the stream ended without a response", model.ErrMalformed)
	}
	if len(resp.ToolCalls) > 0 && runctx.Stopping(r.ctx) {
		// Asked to stop before the calls start: none is made, and the
		// step is taken again on resume.
		r.rewind(before)
		return nil, nil, runctx.ErrInterrupted
	}
	return resp, ptr(resp.Record(req, r.a.cfg.Model.Name(), !req.NoStream)), nil
}

// rewind drops what the current step added to the session since it had n
// chunks (a step taken again later).
func (r *run) rewind(n int) {
	if s, err := r.s.Rewind(n); err == nil {
		r.s = s
	}
}

// responseOf is the response a model_call chunk records.
func responseOf(mc *session.ModelCall) *model.Response {
	o := mc.Response
	return &model.Response{Text: o.Text, Reasoning: o.Reasoning, ReasoningBlocks: o.ReasoningBlocks, Refusal: o.Refusal,
		ToolCalls: o.ToolCalls, FinishReason: o.FinishReason, Usage: mc.Usage, Model: o.Model, Provider: mc.Provider,
		RequestID: o.RequestID, Attempts: mc.Attempts, Latency: mc.Latency}
}

// commit stores the session if the agent has a store and it changed.
func (r *run) commit(ctx context.Context) error {
	st := r.store()
	if st == nil || r.s.Head() == r.stored || runctx.Storeless(r.ctx) {
		return nil
	}
	if err := st.Commit(ctx, r.s, r.stored); err != nil {
		return fmt.Errorf("agent %s: commit: %w", r.a.cfg.Name, err)
	}
	if run := runctx.ID(r.ctx); r.stored == "" && run != "" {
		// Watchers (a run's event stream) learn whose session it is: reported.
		if err := st.SetLabel(store.WithLabelEvents(ctx), r.s.ID(), runctx.Label, string(run)); err != nil {
			return fmt.Errorf("agent %s: label: %w", r.a.cfg.Name, err)
		}
	}
	r.stored = r.s.Head()
	r.emit(Event{Kind: Committed, Session: r.s})
	return nil
}

func (r *run) release() {
	if r.lease != nil {
		r.lease.Release()
	}
}

// allIdempotent reports whether every call is to an idempotent tool.
func (r *run) allIdempotent(calls []session.ToolCall) bool {
	for _, c := range calls {
		if t := r.a.tools[c.Name]; t == nil || !t.Idempotent() {
			return false
		}
	}
	return true
}

// store is where the run commits: the agent's own store, else the store of
// the workflow run it belongs to (durable by default: a workflow run with a
// store commits every step of its agents).
func (r *run) store() store.Store {
	if st := r.a.cfg.Store; st != nil {
		return st
	}
	return runctx.Store(r.ctx)
}
