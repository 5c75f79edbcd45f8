package session

import (
	"encoding/json"
	"fmt"
	"time"
)

// Tool error kinds recorded in ToolError.Kind. Tools and agents may add their
// own; these are the ones the runtime itself produces.
const (
	ToolErrInvalidArgs = "invalid_arguments" // arguments malformed or schema-invalid
	ToolErrUnknownTool = "unknown_tool"      // the model named no offered tool
	ToolErrExecution   = "execution"         // the tool ran and failed
	ToolErrTimeout     = "timeout"           // the tool ran out of time
	ToolErrPolicy      = "policy"            // a policy refused the call
	ToolErrRejected    = "rejected"          // a human or validator refused it
	ToolErrInterrupted = "interrupted"       // the process died mid-call
	ToolErrCanceled    = "canceled"          // the run was cancelled
	ToolErrServerGone  = "server_gone"       // the tool's server died or could not be reached
)

// ToolError says why a tool call produced no result.
type ToolError struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// Effect operations on workspace files.
const (
	EffectAdded    = "added"
	EffectModified = "modified"
	EffectDeleted  = "deleted"
)

// FileEffect is one change a tool made to its sandbox's workspace.
type FileEffect struct {
	Path string `json:"path"`
	Op   string `json:"op"` // EffectAdded, EffectModified or EffectDeleted
	// Before and After are "sha256:<hex>" content hashes; empty when the
	// file did not exist on that side.
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
	Size   int64  `json:"size,omitempty"`
	// Diff is a unified diff for text files under the sandbox's size limit.
	Diff   string `json:"diff,omitempty"`
	Binary bool   `json:"binary,omitempty"`
}

// ToolResult is the body of a tool_result chunk: the full evidence of one
// tool call.
type ToolResult struct {
	CallID string          `json:"call_id"`
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args,omitempty"`
	// Content is what the tool returned, byte for byte, possibly cut to
	// the result limit (a ToolNoteTruncated note then says so). Nothing
	// the runtime has to say about the call is ever written into it: that
	// goes in Notes.
	Content string     `json:"content,omitempty"`
	Error   *ToolError `json:"error,omitempty"`
	// FullSize and FullHash describe the untruncated result when Content was
	// cut: its length in bytes and its "sha256:<hex>" hash.
	FullSize  int64         `json:"full_size,omitempty"`
	FullHash  string        `json:"full_hash,omitempty"`
	Duration  time.Duration `json:"duration_ns,omitempty"`
	SandboxID string        `json:"sandbox_id,omitempty"`
	Effects   []FileEffect  `json:"effects,omitempty"`
	// Egress are the connections the call's command opened, each as it
	// was decided (allowed or refused) before anything was dialled, in
	// order; a ToolNoteEgress note counts those past the recorded ones.
	Egress []Connection `json:"egress,omitempty"`
	// Notes are the evidence about the call that is not its output: a
	// server restarted or reconnected before it, the content cut, a secret
	// scrubbed. A model is shown them apart from the content (see
	// Message.Notes), never inside it.
	Notes []ToolNote `json:"notes,omitempty"`
}

func (*ToolResult) Kind() Kind { return KindToolResult }

func (r *ToolResult) validate() error {
	if r.Tool == "" {
		return fmt.Errorf("%w: tool result for call %q names no tool", ErrInvalid, r.CallID)
	}
	for _, e := range r.Effects {
		switch e.Op {
		case EffectAdded, EffectModified, EffectDeleted:
		default:
			return fmt.Errorf("%w: workspace effect on %q has op %q", ErrInvalid, e.Path, e.Op)
		}
	}
	for i := range r.Egress {
		if err := r.Egress[i].validate(); err != nil {
			return fmt.Errorf("tool result for call %q: %w", r.CallID, err)
		}
	}
	if err := validNotes(r.Notes); err != nil {
		return fmt.Errorf("tool result for call %q: %w", r.CallID, err)
	}
	return validRaw("tool result args", r.Args)
}

// ModelContent is the text a model is shown for this result: the content, or
// for a failed call without content a small JSON object naming the error.
func (r *ToolResult) ModelContent() string {
	if r.Error == nil || r.Content != "" {
		return r.Content
	}
	b, _ := json.Marshal(struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}{r.Error.Kind, r.Error.Message})
	return string(b)
}
