package policy

import "strings"

// The kinds of action a policy decides.
const (
	KindModel       = "model"        // a model call
	KindTool        = "tool"         // a tool call
	KindExec        = "exec"         // a command or program a tool call runs in the sandbox
	KindEgress      = "egress"       // a network host a tool call reaches
	KindMemoryRead  = "memory.read"  // a recall from long-term memory
	KindMemoryWrite = "memory.write" // a commit to long-term memory
)

// RiskHigh is the risk (tool.RiskHigh) whose calls, to tools that are not
// idempotent, need approval unless a rule decides otherwise.
const RiskHigh = "high"

// Action is what a policy decides on: its facts, which rules see as the
// CEL variable action (field names as in the JSON tags, e.g. action.tool,
// action.args.path, action.idempotent). A fact that does not apply to the
// action's kind is empty.
type Action struct {
	// Kind is one of the Kind constants.
	Kind string `json:"kind"`
	// Tool is the tool's name (tool, exec and egress actions).
	Tool string `json:"tool"`
	// Args are the call's arguments, decoded (a JSON object; empty if the
	// arguments are not one).
	Args map[string]any `json:"args"`
	// Risk is the tool's declared risk: "low", "medium", "high", or ""
	// when it declares none.
	Risk string `json:"risk"`
	// Idempotent reports whether repeating the call is harmless.
	Idempotent bool `json:"idempotent"`
	// Tenant and Project are the scope the run works for.
	Tenant  string `json:"tenant"`
	Project string `json:"project"`
	// Agent is the name of the agent acting.
	Agent string `json:"agent"`
	// Placement is the sandbox backend the session is placed on ("" for
	// none).
	Placement string `json:"placement"`
	// Host is the network host an egress action reaches (lower case, no
	// port).
	Host string `json:"host"`
	// Port is the TCP port an egress action connects to: set when a
	// sandbox's egress proxy decides a connection a command opens, 0 when
	// the host is one a call's arguments name.
	Port int `json:"port"`
	// Command is what an exec action runs: the command line, the shell
	// script or the program text.
	Command string `json:"command"`
	// Model is the model's name, Provider its provider (model actions).
	Model    string `json:"model"`
	Provider string `json:"provider"`
	// Scope is the memory scope written (memory.write) or the first one
	// read; Scopes are all of them (memory.read may read several).
	Scope  string   `json:"scope"`
	Scopes []string `json:"scopes"`
}

// knownKind reports whether k is one of the Kind constants.
func knownKind(k string) bool {
	switch k {
	case KindModel, KindTool, KindExec, KindEgress, KindMemoryRead, KindMemoryWrite:
		return true
	}
	return false
}

// Shared empty facts (rules only read them).
var (
	noArgs   = map[string]any{}
	noScopes = []string{}
)

// normalized is a with its facts in the form rules compare them in: risk
// and host in lower case, args and scopes never nil.
func (a Action) normalized() Action {
	a.Risk = strings.ToLower(a.Risk)
	a.Host = strings.ToLower(a.Host)
	if a.Args == nil {
		a.Args = noArgs
	}
	if a.Scopes == nil {
		a.Scopes = noScopes
		if a.Scope != "" {
			a.Scopes = []string{a.Scope}
		}
	}
	if a.Scope == "" && len(a.Scopes) > 0 {
		a.Scope = a.Scopes[0]
	}
	return a
}
