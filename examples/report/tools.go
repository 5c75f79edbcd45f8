package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/openrath/rath"
	"github.com/openrath/rath/export"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/tool"
)

// The read tools work on rt.Store only: every claim of the report comes
// from one of their results, recorded in the report's own session.

// RunArgs name the preserved run a read tool reads.
type RunArgs struct {
	RunID string `json:"run_id" jsonschema:"the id of the preserved run's output session (ses_...)"`
}

// Overview is run_overview's result.
type Overview struct {
	RunID    session.ID `json:"run_id"`
	Workflow string     `json:"workflow"`
	// Input is the run's input session (its rath.run label).
	Input      session.ID     `json:"input,omitempty"`
	Status     string         `json:"status"`
	Task       string         `json:"task"`
	Chunks     int            `json:"chunks"`
	ByKind     map[string]int `json:"chunks_by_kind"`
	ModelCalls int            `json:"model_calls"`
	Usage      session.Usage  `json:"usage"`
	Created    time.Time      `json:"created"`
	Updated    time.Time      `json:"updated"`
	// Verified is "ok" when the store re-read the chain and every chunk id
	// matched, else the first failure.
	Verified string `json:"verified"`
}

// GraphNode is one session of the run's graph.
type GraphNode struct {
	ID      session.ID   `json:"id"`
	Op      string       `json:"op"`
	Status  string       `json:"status"`
	Len     int          `json:"len"`
	Parents []session.ID `json:"parents,omitempty"`
}

// Graph is session_graph's result: the lineage graph around the run's
// output (export.LoadGraph), and every session the run committed (its
// rath.run label), in creation order.
type Graph struct {
	Root        session.ID    `json:"root"`
	Nodes       []GraphNode   `json:"nodes"`
	Edges       []export.Edge `json:"edges"`
	RunSessions []GraphNode   `json:"run_sessions"`
	// Unstored are parents of the run's sessions that the store does not
	// hold (intermediate module outputs nothing committed), where the
	// stored lineage graph breaks.
	Unstored []session.ID `json:"unstored_parents"`
}

// Call is one tool call of the run.
type Call struct {
	Index     int             `json:"index"`
	Chunk     session.ChunkID `json:"chunk"`
	Node      string          `json:"node"`
	CallID    string          `json:"call_id"`
	Tool      string          `json:"tool"`
	Args      string          `json:"args"`
	Outcome   string          `json:"outcome"` // "ok" or the error kind
	Message   string          `json:"message,omitempty"`
	Duration  float64         `json:"duration_ms"`
	SandboxID string          `json:"sandbox_id,omitempty"`
	Effects   []string        `json:"effects,omitempty"` // "added results/attempt-1.json"
}

// ToolLog is tool_log's result.
type ToolLog struct {
	Calls []Call `json:"calls"`
}

// Place is one placement chunk of the run.
type Place struct {
	Index      int    `json:"index"`
	Node       string `json:"node,omitempty"`
	Backend    string `json:"backend"`
	Image      string `json:"image,omitempty"`
	Network    bool   `json:"network"`
	Timeout    string `json:"timeout,omitempty"`
	SandboxID  string `json:"sandbox_id,omitempty"`
	TreeHash   string `json:"tree_hash,omitempty"`
	ClonedFrom string `json:"cloned_from,omitempty"`
}

// Sandboxes is sandbox_metadata's result: the placements, and how many
// tool calls ran in each sandbox.
type Sandboxes struct {
	Placements []Place        `json:"placements"`
	CallsIn    map[string]int `json:"calls_by_sandbox"`
}

// Verdict is one approval chunk.
type Verdict struct {
	Index   int             `json:"index"`
	Chunk   session.ChunkID `json:"chunk"`
	Node    string          `json:"node"`
	Subject string          `json:"subject"`
	Verdict string          `json:"verdict"`
	By      string          `json:"by,omitempty"`
	Reason  string          `json:"reason,omitempty"`
}

// Decision is one selector decision.
type Decision struct {
	Index    int      `json:"index"`
	Node     string   `json:"node"`
	Selector string   `json:"selector"`
	Choice   string   `json:"choice"`
	Reason   string   `json:"reason,omitempty"`
	NotTaken []string `json:"not_taken,omitempty"`
}

// Validation is validation_results' result: every verdict (validators,
// humans) and every routing decision, in order, and the last verdict.
type Validation struct {
	Approvals []Verdict  `json:"approvals"`
	Decisions []Decision `json:"decisions"`
	Final     string     `json:"final_verdict"` // the last verdict, "none" without any
}

// FailedCall is a tool call that ended in an error.
type FailedCall struct {
	Index   int    `json:"index"`
	Node    string `json:"node"`
	CallID  string `json:"call_id"`
	Tool    string `json:"tool"`
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// ErrorChunk is one error chunk.
type ErrorChunk struct {
	Index   int    `json:"index"`
	Node    string `json:"node"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Failures is failure_analysis' result.
type Failures struct {
	Errors      []ErrorChunk `json:"errors"`
	FailedCalls []FailedCall `json:"failed_calls"`
	Rejections  []Verdict    `json:"rejections"`
	Status      string       `json:"status"`
	Summary     string       `json:"summary"`
}

// ReadTools returns the tools that read a preserved run from st.
func ReadTools(st store.Store) []tool.Tool {
	return []tool.Tool{
		read(st, "run_overview", "The run's workflow, status, task, chunk counts, usage and hash-chain verification.", overview),
		read(st, "session_graph", "The run's session graph: the lineage around its output and every session the run committed.", graph),
		read(st, "tool_log", "Every tool call of the run: arguments, outcome, duration, sandbox and workspace effects.", toolLog),
		read(st, "sandbox_metadata", "Where the run's tools ran: its placements (backend, spec, sandbox id, workspace tree hash).", sandboxes),
		read(st, "validation_results", "The run's verdicts (approval chunks) and routing decisions.", validation),
		read(st, "failure_analysis", "What went wrong in the run: error chunks, failed tool calls and rejected verdicts.", failures),
	}
}

// read makes a read tool of fn, which gets the run's info and session.
func read[Out any](st store.Store, name, desc string, fn func(context.Context, store.Store, store.Info, *session.Session) (Out, error)) tool.Tool {
	t, err := tool.FuncWith(name, desc, func(ctx context.Context, _ tool.Env, a RunArgs) (Out, error) {
		var zero Out
		id := session.ID(a.RunID)
		info, err := st.Info(ctx, id)
		if err != nil {
			return zero, fmt.Errorf("%s: %w", name, err)
		}
		s, err := st.Load(ctx, id)
		if err != nil {
			return zero, fmt.Errorf("%s: %w", name, err)
		}
		return fn(ctx, st, info, s)
	}, tool.Idempotent[RunArgs]())
	if err != nil {
		panic(err) // RunArgs is this package's own
	}
	return t
}

func overview(ctx context.Context, st store.Store, info store.Info, s *session.Session) (Overview, error) {
	o := Overview{RunID: info.ID, Workflow: info.Labels[rath.WorkflowLabel], Input: session.ID(info.Labels[runctx.Label]),
		Status: string(info.Status), Chunks: s.Len(), ByKind: map[string]int{}, Usage: s.Usage(),
		Created: info.Created.UTC(), Updated: info.Updated.UTC(), Verified: "ok"}
	for _, c := range s.All() {
		o.ByKind[c.Kind.String()]++
		if c.User != nil && o.Task == "" {
			o.Task = c.User.Text
		}
	}
	o.ModelCalls = o.ByKind[session.KindModelCall.String()]
	if err := st.Verify(ctx, info.ID); err != nil {
		o.Verified = err.Error()
	}
	return o, nil
}

func graph(ctx context.Context, st store.Store, info store.Info, _ *session.Session) (Graph, error) {
	g, err := export.LoadGraph(ctx, st, info.ID)
	if err != nil {
		return Graph{}, err
	}
	out := Graph{Root: g.Root, Edges: g.Edges, Nodes: []GraphNode{}, RunSessions: []GraphNode{}, Unstored: []session.ID{}}
	for _, n := range g.Nodes {
		out.Nodes = append(out.Nodes, GraphNode{ID: n.ID, Op: n.Op, Status: n.Status, Len: n.Len})
	}
	if run := info.Labels[runctx.Label]; run != "" {
		infos, err := st.List(ctx, store.Filter{Labels: map[string]string{runctx.Label: run}})
		if err != nil {
			return Graph{}, err
		}
		sort.SliceStable(infos, func(i, j int) bool { return infos[i].Created.Before(infos[j].Created) })
		for _, in := range infos {
			out.RunSessions = append(out.RunSessions, GraphNode{ID: in.ID, Op: in.Lineage.Op, Status: string(in.Status), Len: in.Len, Parents: in.Lineage.Parents})
			for _, p := range in.Lineage.Parents {
				_, err := st.Info(ctx, p)
				switch {
				case errors.Is(err, store.ErrNotFound):
					out.Unstored = append(out.Unstored, p)
				case err != nil:
					return Graph{}, err
				}
			}
		}
	}
	return out, nil
}

func toolLog(_ context.Context, _ store.Store, _ store.Info, s *session.Session) (ToolLog, error) {
	l := ToolLog{Calls: []Call{}}
	for i, c := range s.All() {
		r := c.ToolResult
		if r == nil {
			continue
		}
		call := Call{Index: i, Chunk: c.ID, Node: c.Node, CallID: r.CallID, Tool: r.Tool, Args: string(r.Args), Outcome: "ok",
			Duration: float64(r.Duration.Microseconds()) / 1000, SandboxID: r.SandboxID}
		if r.Error != nil {
			call.Outcome, call.Message = r.Error.Kind, r.Error.Message
		}
		for _, e := range r.Effects {
			call.Effects = append(call.Effects, e.Op+" "+e.Path)
		}
		l.Calls = append(l.Calls, call)
	}
	return l, nil
}

func sandboxes(_ context.Context, _ store.Store, _ store.Info, s *session.Session) (Sandboxes, error) {
	out := Sandboxes{Placements: []Place{}, CallsIn: map[string]int{}}
	for i, c := range s.All() {
		if p := c.Placement; p != nil {
			pl := Place{Index: i, Node: c.Node, Backend: p.Backend, Image: p.Spec.Image, Network: p.Spec.Network,
				SandboxID: p.SandboxID, TreeHash: p.TreeHash, ClonedFrom: p.ClonedFrom}
			if p.Spec.Timeout > 0 {
				pl.Timeout = p.Spec.Timeout.String()
			}
			out.Placements = append(out.Placements, pl)
		}
		if r := c.ToolResult; r != nil && r.SandboxID != "" {
			out.CallsIn[r.SandboxID]++
		}
	}
	return out, nil
}

func validation(_ context.Context, _ store.Store, _ store.Info, s *session.Session) (Validation, error) {
	v := Validation{Approvals: []Verdict{}, Decisions: []Decision{}, Final: "none"}
	for i, c := range s.All() {
		if a := c.Approval; a != nil {
			v.Approvals = append(v.Approvals, verdictOf(i, c))
			v.Final = a.Verdict
		}
		if d := c.Decision; d != nil {
			dec := Decision{Index: i, Node: c.Node, Selector: d.Selector, Choice: d.Choice, Reason: d.Reason}
			for _, cand := range d.Candidates {
				if cand.Name != d.Choice {
					dec.NotTaken = append(dec.NotTaken, cand.Name)
				}
			}
			v.Decisions = append(v.Decisions, dec)
		}
	}
	return v, nil
}

func failures(_ context.Context, _ store.Store, info store.Info, s *session.Session) (Failures, error) {
	f := Failures{Errors: []ErrorChunk{}, FailedCalls: []FailedCall{}, Rejections: []Verdict{}, Status: string(info.Status)}
	for i, c := range s.All() {
		switch {
		case c.Error != nil:
			f.Errors = append(f.Errors, ErrorChunk{Index: i, Node: c.Node, Code: c.Error.Code, Message: c.Error.Message})
		case c.ToolResult != nil && c.ToolResult.Error != nil:
			r := c.ToolResult
			f.FailedCalls = append(f.FailedCalls, FailedCall{Index: i, Node: c.Node, CallID: r.CallID, Tool: r.Tool, Kind: r.Error.Kind, Message: r.Error.Message})
		case c.Approval != nil && c.Approval.Verdict == session.VerdictRejected:
			f.Rejections = append(f.Rejections, verdictOf(i, c))
		}
	}
	f.Summary = fmt.Sprintf("%s, %s, %s; the run ended %s", plural(len(f.Errors), "error chunk"), plural(len(f.FailedCalls), "failed tool call"),
		plural(len(f.Rejections), "rejected verdict"), f.Status)
	return f, nil
}

func verdictOf(i int, c session.Chunk) Verdict {
	a := c.Approval
	return Verdict{Index: i, Chunk: c.ID, Node: c.Node, Subject: a.Subject, Verdict: a.Verdict, By: a.By, Reason: a.Reason}
}

// decode reads a read tool's result.
func decode[T any](content string) (T, error) {
	var v T
	err := json.Unmarshal([]byte(content), &v)
	return v, err
}
