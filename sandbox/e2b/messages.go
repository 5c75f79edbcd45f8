package e2b

// The envd Connect RPC messages in their Protobuf JSON form (field names in
// lowerCamelCase, bytes in base64, 64-bit integers as strings, enums by
// name), after envd's process.proto and filesystem.proto.

type processConfig struct {
	Cmd  string            `json:"cmd"`
	Args []string          `json:"args,omitempty"`
	Envs map[string]string `json:"envs,omitempty"`
	Cwd  *string           `json:"cwd,omitempty"`
}

type startRequest struct {
	Process processConfig `json:"process"`
	Stdin   *bool         `json:"stdin,omitempty"`
}

type processEvent struct {
	Start *struct {
		Pid uint32 `json:"pid"`
	} `json:"start,omitempty"`
	Data *struct {
		Stdout []byte `json:"stdout,omitempty"`
		Stderr []byte `json:"stderr,omitempty"`
		Pty    []byte `json:"pty,omitempty"`
	} `json:"data,omitempty"`
	End *struct {
		ExitCode int32   `json:"exitCode"`
		Exited   bool    `json:"exited"`
		Status   string  `json:"status"`
		Error    *string `json:"error,omitempty"`
	} `json:"end,omitempty"`
	Keepalive *struct{} `json:"keepalive,omitempty"`
}

type startResponse struct {
	Event processEvent `json:"event"`
}

type processSelector struct {
	Pid uint32 `json:"pid"`
}

type processInput struct {
	Stdin []byte `json:"stdin"`
}

type sendInputRequest struct {
	Process processSelector `json:"process"`
	Input   processInput    `json:"input"`
}

type closeStdinRequest struct {
	Process processSelector `json:"process"`
}

type removeRequest struct {
	Path string `json:"path"`
}

type empty struct{}
