package export

import (
	"encoding/json"
	"time"

	"github.com/openrath/rath/session"
)

// DossierVersion is the version of the dossier.json layout this build
// writes.
const DossierVersion = 1

// DossierData is everything the evidence dossier of one session shows. It
// is written as dossier.json next to index.html; every list is present (if
// empty) so readers need not test for null.
type DossierData struct {
	Version   int            `json:"version"`
	Generated time.Time      `json:"generated"`
	Session   SessionSummary `json:"session"`
	// Task is the text of the first user message.
	Task string `json:"task"`
	// Environment lists the placement chunks: where the tools ran.
	Environment []Environment `json:"environment"`
	// Workflow is the tree of node paths the chunks were produced under.
	Workflow *WorkflowNode `json:"workflow"`
	// Graph is the lineage graph around the session. GraphDOT is its DOT
	// text; GraphSVG its drawing (see SVG), and GraphNote says why the
	// page shows no drawing when it does not.
	Graph     *Graph `json:"graph"`
	GraphDOT  string `json:"graph_dot"`
	GraphSVG  string `json:"graph_svg,omitempty"`
	GraphNote string `json:"graph_note,omitempty"`
	// Timeline has one entry per chunk, in order.
	Timeline  []TimelineEntry  `json:"timeline"`
	ToolCalls []ToolCallRecord `json:"tool_calls"`
	Tests     []TestResult     `json:"tests"`
	Decisions []DecisionRecord `json:"decisions"`
	// Rejected lists what the run turned down: routes a selector did not
	// take, rejected approvals and tool calls refused as rejected.
	Rejected  []Rejection      `json:"rejected"`
	Approvals []ApprovalRecord `json:"approvals"`
	Errors    []ErrorRecord    `json:"errors"`
	Memory    []MemoryRecord   `json:"memory"`
	Usage     UsageReport      `json:"usage"`
	Verify    VerifyStatus     `json:"verify"`
}

// SessionSummary identifies the session a dossier describes.
type SessionSummary struct {
	ID      session.ID        `json:"id"`
	Head    session.ChunkID   `json:"head,omitempty"`
	Len     int               `json:"len"`
	Lineage session.Lineage   `json:"lineage"`
	Status  string            `json:"status"`
	Labels  map[string]string `json:"labels,omitempty"`
	Created time.Time         `json:"created"`
	Updated time.Time         `json:"updated"`
}

// At locates a chunk: its index in the session, id, node path and time.
// The records of a dossier embed it.
type At struct {
	Index int             `json:"index"`
	Chunk session.ChunkID `json:"chunk"`
	Node  string          `json:"node,omitempty"`
	Time  time.Time       `json:"time"`
}

// Environment is one placement chunk: the sandbox backend and spec, and,
// once opened, the sandbox id and workspace tree hash it recorded.
type Environment struct {
	At
	Backend    string       `json:"backend"`
	Image      string       `json:"image,omitempty"`
	Spec       session.Spec `json:"spec"`
	SandboxID  string       `json:"sandbox_id,omitempty"`
	TreeHash   string       `json:"tree_hash,omitempty"`
	ClonedFrom string       `json:"cloned_from,omitempty"`
	// Remote is where a remote provider's sandbox lives (provider, API
	// URL, domain, template, snapshot).
	Remote *session.Remote `json:"remote,omitempty"`
}

// WorkflowNode is one segment of the node paths of a session's chunks, such
// as "triage" in "0/triage/branch-1/agent:coder#1".
type WorkflowNode struct {
	Name string `json:"name"`
	// Path is the full path up to and including this segment ("" for the
	// root).
	Path string `json:"path"`
	// Chunks counts the chunks produced exactly at Path; Total those at Path
	// or below.
	Chunks   int             `json:"chunks"`
	Total    int             `json:"total"`
	Children []*WorkflowNode `json:"children,omitempty"`
}

// TimelineEntry is one chunk in a line.
type TimelineEntry struct {
	Index   int             `json:"index"`
	ID      session.ChunkID `json:"id"`
	Kind    string          `json:"kind"`
	Node    string          `json:"node,omitempty"`
	Time    time.Time       `json:"time"`
	Tier    string          `json:"tier"`
	Origin  session.ChunkID `json:"origin,omitempty"`
	Summary string          `json:"summary"`
}

// ToolCallRecord is one tool call: what was asked and what came of it.
type ToolCallRecord struct {
	At
	// Request is the assistant chunk that asked for the call, if found.
	Request session.ChunkID `json:"request,omitempty"`
	CallID  string          `json:"call_id"`
	Tool    string          `json:"tool"`
	Args    json.RawMessage `json:"args,omitempty"`
	// ArgsText keeps arguments that were not valid JSON, as sent.
	ArgsText string             `json:"args_text,omitempty"`
	Result   string             `json:"result,omitempty"`
	Error    *session.ToolError `json:"error,omitempty"`
	// FullSize and FullHash describe a result that was truncated.
	FullSize  int64                `json:"full_size,omitempty"`
	FullHash  string               `json:"full_hash,omitempty"`
	Duration  time.Duration        `json:"duration_ns,omitempty"`
	SandboxID string               `json:"sandbox_id,omitempty"`
	Effects   []session.FileEffect `json:"effects,omitempty"`
	// Egress are the connections the call's command opened, each as the
	// sandbox's egress proxy decided it.
	Egress []session.Connection `json:"egress,omitempty"`
	// Notes are the call's evidence notes (a server restarted before it,
	// the result cut, a secret scrubbed), kept apart from Result, which is
	// what the tool returned.
	Notes []session.ToolNote `json:"notes,omitempty"`
	// Missing marks a call that was requested but has no result chunk (the
	// run stopped before it finished); At is then the request's.
	Missing bool `json:"missing,omitempty"`
}

// Test outcomes.
const (
	TestPass    = "pass"
	TestFail    = "fail"
	TestUnknown = "unknown"
)

// TestResult is a run_command or run_code call whose arguments mention
// "test".
type TestResult struct {
	At
	CallID  string `json:"call_id"`
	Tool    string `json:"tool"`
	Command string `json:"command"`
	// ExitCode is the exit code the result recorded ("exit code N"), nil
	// if it recorded none.
	ExitCode *int `json:"exit_code,omitempty"`
	// Status is TestPass, TestFail or TestUnknown.
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	Output string `json:"output,omitempty"`
}

// DecisionRecord is one selector decision.
type DecisionRecord struct {
	At
	Selector   string              `json:"selector"`
	Candidates []session.Candidate `json:"candidates"`
	Choice     string              `json:"choice"`
	Reason     string              `json:"reason,omitempty"`
	ModelCall  session.ChunkID     `json:"model_call,omitempty"`
}

// Rejection kinds.
const (
	RejectedBranch   = "branch"    // a route a selector did not take
	RejectedApproval = "approval"  // an approval with verdict rejected
	RejectedToolCall = "tool_call" // a tool call refused as rejected
)

// Rejection is one thing the run turned down.
type Rejection struct {
	At
	What    string `json:"what"` // RejectedBranch, RejectedApproval or RejectedToolCall
	Subject string `json:"subject"`
	By      string `json:"by,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// ApprovalRecord is one approval chunk: a request for a verdict or the
// verdict.
type ApprovalRecord struct {
	At
	Subject string `json:"subject"`
	CallID  string `json:"call_id,omitempty"`
	Verdict string `json:"verdict"`
	By      string `json:"by,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// ErrorRecord is one error chunk: a failure the run recorded.
type ErrorRecord struct {
	At
	Code    string `json:"code"`
	Message string `json:"message"`
}

// MemoryRecord is one memory chunk, with its provenance: for a recall the
// hits with their writers and evidence, for a write the URI, content hash
// and evidence ids.
type MemoryRecord struct {
	At
	session.MemoryEvent
}

// UsageReport sums the model_call usage of a session by node path, by
// agent and in total.
type UsageReport struct {
	ByNode  []NodeUsage   `json:"by_node"`
	ByAgent []NodeUsage   `json:"by_agent"`
	Calls   int           `json:"calls"`
	Total   session.Usage `json:"total"`
}

// NodeUsage is the usage of the model calls made under one node path (or
// by one agent, for UsageReport.ByAgent).
type NodeUsage struct {
	Node   string        `json:"node"`
	Calls  int           `json:"calls"`
	Models []string      `json:"models,omitempty"`
	Usage  session.Usage `json:"usage"`
}

// Verification results in VerifyStatus.
const VerifyOK = "ok"

// VerifyStatus says whether the hash chain verifies: Session is the result
// of the loaded session's Verify, Store that of the store's Verify, each
// VerifyOK or the error text.
type VerifyStatus struct {
	OK      bool   `json:"ok"`
	Session string `json:"session"`
	Store   string `json:"store"`
}
