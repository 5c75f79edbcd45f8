package openrath

import "encoding/json"

// The records Encode writes. OpenRath-Python's session files hold one JSON
// object per line, told apart by "record_type": a "header", then "chunk"
// records, then a "trailer" once the run closed cleanly. See the
// OpenRath-Python inventory, openrath-python.md §1.4. Fields the original
// writes as null when unset are pointers or nil slices here, so the output
// matches its shape key for key.

type headerRecord struct {
	RecordType       string   `json:"record_type"`
	SchemaVersion    int      `json:"schema_version"`
	ID               string   `json:"id"`
	CreatedAt        string   `json:"created_at"`
	ParentSessionIDs []string `json:"parent_session_ids"`
	LineageOperator  string   `json:"lineage_operator"`
	LineageKind      string   `json:"lineage_kind"`
	// LineageExtras is a JSON array of [key, value] pairs.
	LineageExtras   json.RawMessage `json:"lineage_extras"`
	SandboxBackend  *string         `json:"sandbox_backend"`
	SandboxSpec     *specRecord     `json:"sandbox_spec"`
	SandboxHandleID *string         `json:"sandbox_handle_id"`
}

type specRecord struct {
	Image          *string           `json:"image"`
	Entrypoint     json.RawMessage   `json:"entrypoint"` // nil writes null
	Env            map[string]string `json:"env"`
	TimeoutSeconds *float64          `json:"timeout_seconds"`
	WorkingDir     *string           `json:"working_dir"`
}

type chunkRecord struct {
	RecordType string `json:"record_type"`
	Index      int    `json:"index"`
	Kind       string `json:"kind"`
	Payload    any    `json:"payload"`
}

type textPayload struct {
	Content string `json:"content"`
}

type assistantPayload struct {
	Content   *string    `json:"content"`
	ToolCalls []toolCall `json:"tool_calls"`
}

type toolCall struct {
	ID       string   `json:"id"`
	Type     string   `json:"type"`
	Function function `json:"function"`
}

type function struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type toolResultPayload struct {
	ToolCallID string `json:"tool_call_id"`
	Name       string `json:"name"`
	Content    string `json:"content"`
}

type trailerRecord struct {
	RecordType      string          `json:"record_type"`
	ClosedAt        string          `json:"closed_at"`
	FinalChunkCount int             `json:"final_chunk_count"`
	CumulativeUsage json.RawMessage `json:"cumulative_usage"` // nil writes null
}

type usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}
