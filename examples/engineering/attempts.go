package engineering

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
)

// Labels the attempts put on their branches in the store.
const (
	LabelAttempt = "engineering.attempt" // "1", "2", ...
	LabelVerdict = "engineering.verdict" // "accepted" or "rejected"
)

// Attempts fixes the issue in attempts. Each runs on its own fork of the
// input — the session before any patch — placed on its own copy of the
// workspace: the Coder patches, the Tester runs the tests, Check judges.
// A rejected attempt's failure pattern is remembered, with the patch and
// the failing test run as evidence, and the next attempt starts from the
// input again with the rejection in view. The output merges the attempts
// in order (rejected ones first), placed on the last one's workspace;
// every attempt is also stored as a branch of its own.
type Attempts struct {
	Coder  *agent.Agent
	Tester *agent.Agent
	Check  *flow.Validator
	// Max bounds the attempts; reaching it without acceptance fails with
	// flow.ErrRejected.
	Max int

	sandboxes *sandbox.Pool
	memory    memory.Memory
	scope     string
}

// Forward implements flow.Module.
func (a *Attempts) Forward(ctx context.Context, in *session.Session) (*session.Session, error) {
	var tried []*session.Session
	feedback := ""
	for i := 1; i <= max(a.Max, 1); i++ {
		out, err := a.attempt(runctx.WithPath(ctx, "attempt-"+strconv.Itoa(i)), in, i, feedback)
		if out != nil {
			tried = append(tried, out)
		}
		if !errors.Is(err, flow.ErrRejected) || out == nil {
			return join(ctx, tried, err)
		}
		feedback = fmt.Sprintf("Attempt %d was rejected by the %s validator: %s\n\n"+
			"This attempt starts again from the code as it was before that patch, in a fresh copy of the workspace. "+
			"Fix the issue so that `go test ./...` passes, without repeating the rejected patch.", i, a.Check.Name, reason(out))
	}
	return join(ctx, tried, fmt.Errorf("%w: %d attempts, none accepted", flow.ErrRejected, len(tried)))
}

// attempt runs attempt i on a fork of in and stores it as a branch.
func (a *Attempts) attempt(ctx context.Context, in *session.Session, i int, feedback string) (*session.Session, error) {
	s, err := a.fork(ctx, in, feedback)
	if err != nil {
		return nil, err
	}
	start := s.Len()
	if s, err = a.Coder.Forward(ctx, s); err != nil {
		return s, err
	}
	if s, err = a.Tester.Forward(ctx, s); err != nil {
		return s, err
	}
	s, verr := a.Check.Forward(ctx, s)
	verdict := "accepted"
	if errors.Is(verr, flow.ErrRejected) {
		verdict = "rejected"
		if s, err = a.remember(ctx, s, start); err != nil {
			return s, err // not a rejection: the run stops
		}
	}
	if err := commit(ctx, s); err != nil {
		return s, err
	}
	if err := label(ctx, s.ID(), map[string]string{LabelAttempt: strconv.Itoa(i), LabelVerdict: verdict}); err != nil {
		return s, err
	}
	return s, verr
}

// fork forks in onto a copy of its workspace, adds the feedback of the
// rejected attempt if any, and stores the fork, the branch point.
func (a *Attempts) fork(ctx context.Context, in *session.Session, feedback string) (*session.Session, error) {
	f := in.Fork()
	node := runctx.Invoke(ctx, "fork")
	s, ok, err := replayed(ctx, f, node)
	if err != nil {
		return nil, err
	}
	if !ok {
		if s, err = a.sandboxes.Fork(ctx, in, f, false); err != nil {
			return nil, fmt.Errorf("engineering: fork the workspace: %w", err)
		}
		if s, err = runctx.Adopt(ctx, s, f.Len(), node); err != nil {
			return nil, err
		}
	}
	if feedback != "" {
		if s, err = runctx.Record(ctx, s, runctx.Invoke(ctx, "feedback"), session.User(feedback)); err != nil {
			return nil, err
		}
	}
	return s, commit(ctx, s)
}

// remember writes the failure pattern of a rejected attempt (s, from
// chunk start on) to memory, with the patch's and the failing test run's
// tool_result chunks as its evidence.
func (a *Attempts) remember(ctx context.Context, s *session.Session, start int) (*session.Session, error) {
	node := runctx.Invoke(ctx, "remember")
	if s, ok, err := replayed(ctx, s, node); ok || err != nil {
		return s, err
	}
	var evidence []session.ChunkID
	var files []string
	var run *session.ToolResult
	var runID session.ChunkID
	for _, c := range s.From(start) {
		r := c.ToolResult
		switch {
		case r == nil:
		case (r.Tool == "edit_file" || r.Tool == "write_file") && r.Error == nil:
			evidence = append(evidence, c.ID)
			for _, e := range r.Effects {
				files = append(files, e.Path)
			}
		case r.Tool == "run_command" && isGoTest(r.Args):
			run, runID = r, c.ID
			evidence = append(evidence, c.ID)
		}
	}
	if run == nil {
		return s, nil // nothing ran, so nothing failed that is worth keeping
	}
	// The entry is named after the failing run's chunk: content-addressed,
	// so a replay of this run names it alike.
	scope, id, _ := strings.Cut(a.scope, "/")
	e := memory.Entry{
		URI:     memory.URI{Scope: scope, ScopeID: id, Path: "failures/" + failureName(runID)},
		Content: failurePattern(s, start, files, run),
		Provenance: memory.Provenance{Evidence: evidence, Kind: memory.EvidenceFailure,
			Agent: "validator:" + a.Check.Name},
	}
	n := s.Len()
	s, err := a.memory.Remember(ctx, s, e)
	if err != nil {
		return s, fmt.Errorf("engineering: remember the failure: %w", err)
	}
	return runctx.Adopt(ctx, s, n, node)
}

// failureName names a failure after its test run's chunk id.
func failureName(run session.ChunkID) string {
	return "wordcount-" + strings.TrimPrefix(string(run), "sha256:")[:12]
}

// failurePattern says what was tried and how it failed, in words a later
// recall can match against the same issue.
func failurePattern(s *session.Session, start int, files []string, run *session.ToolResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "A patch for ISSUE.md (%s) was rejected: `go test ./...` still failed after it.", issueTitle())
	if len(files) > 0 {
		fmt.Fprintf(&b, "\nThe rejected patch changed %s.", strings.Join(files, ", "))
	}
	if summary := coderSummary(s, start); summary != "" {
		fmt.Fprintf(&b, " Its author said: %s", summary)
	}
	if run != nil {
		if code, out, ok := TestRun(run); ok {
			fmt.Fprintf(&b, "\nThe test run (exit code %d):\n%s", code, out)
		}
	}
	return b.String()
}

// issueTitle is the bundled issue's first line, without the "#".
func issueTitle() string {
	data, err := repo.ReadFile(repoRoot + "/ISSUE.md")
	if err != nil {
		return "the bundled issue"
	}
	line, _, _ := strings.Cut(string(data), "\n")
	return strings.TrimSpace(strings.TrimLeft(line, "# "))
}

// coderSummary is the coder's final answer in the attempt.
func coderSummary(s *session.Session, start int) string {
	summary := ""
	for _, c := range s.From(start) {
		if t := c.Assistant; t != nil && len(t.ToolCalls) == 0 && strings.Contains(c.Node, "agent:coder") {
			summary = strings.TrimSpace(t.Text)
		}
	}
	return summary
}

// reason is the reason of the last verdict in s.
func reason(s *session.Session) string {
	if v := Verdicts(s); len(v) > 0 {
		return v[len(v)-1].Reason
	}
	return "(no reason recorded)"
}

// join merges the attempts in order, placed where the last one ran, and
// stores each merge; with a single attempt it is that attempt.
func join(ctx context.Context, tried []*session.Session, err error) (*session.Session, error) {
	if len(tried) == 0 {
		return nil, err
	}
	out := tried[0]
	for _, t := range tried[1:] {
		m, merr := out.Merge(t, session.KeepPlacement(session.Theirs), session.MergeOp("fix:join"))
		if merr == nil {
			merr = commit(ctx, m)
		}
		if merr != nil {
			return out, errors.Join(err, fmt.Errorf("engineering: merge the attempts: %w", merr))
		}
		out = m
	}
	return out, err
}
