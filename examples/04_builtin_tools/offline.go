package builtintools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/session"
)

// The files the offline model writes: the first script forgets the
// default, which the test run shows and edit_file fixes.
const (
	firstScript = "#!/bin/sh\n# greet.sh [NAME]: greets NAME, or the world.\necho \"Hello, $1!\"\n"
	brokenLine  = `echo "Hello, $1!"`
	fixedLine   = `echo "Hello, ${1:-world}!"`
	readme      = "# greet.sh\n\nGreets someone by name, or the world:\n\n    sh greet.sh Ada    # Hello, Ada!\n    sh greet.sh        # Hello, world!\n"
	testRun     = "sh greet.sh Ada; sh greet.sh"
)

// offline plays the engineer: each answer depends on the results of the
// calls it made last.
func offline(_ context.Context, req *model.Request) (model.Response, error) {
	var last []session.Message // the results of the latest step
	var lastRun string         // the latest run_command output
	for _, m := range req.Messages {
		switch m.Role {
		case session.RoleAssistant:
			last = nil
		case session.RoleTool:
			last = append(last, m)
			if m.Name == "run_command" {
				lastRun = m.Content
			}
		}
	}
	for _, m := range last {
		if strings.HasPrefix(m.Content, `{"error":`) {
			return model.Response{Text: fmt.Sprintf("I had to stop: %s failed with %s", m.Name, m.Content)}, nil
		}
	}
	if len(last) == 0 {
		return calls("Let me look at the workspace first.", call("look", "list_files", map[string]any{})), nil
	}
	switch last[0].Name {
	case "list_files":
		return calls("The workspace is empty. Writing the script and its README.",
			call("script", "write_file", map[string]any{"path": "greet.sh", "content": firstScript}),
			call("readme", "write_file", map[string]any{"path": "README.md", "content": readme})), nil
	case "write_file":
		return calls("Testing both cases.", call("test-1", "run_command", map[string]any{"shell": testRun})), nil
	case "run_command":
		if strings.Contains(last[0].Content, "Hello, !") {
			return calls(`Without a name it prints "Hello, !": the default is missing. Fixing it.`,
				call("fix", "edit_file", map[string]any{"path": "greet.sh", "old": brokenLine, "new": fixedLine})), nil
		}
		return calls("Both cases work. Checking that the README and the script agree.",
			call("check", "grep", map[string]any{"pattern": "world"}),
			call("show", "read_file", map[string]any{"path": "greet.sh"})), nil
	case "edit_file":
		return calls("Testing again.", call("test-2", "run_command", map[string]any{"shell": testRun})), nil
	}
	script := ""
	for _, m := range last {
		if m.Name == "read_file" {
			script = m.Content
		}
	}
	_, out, _ := strings.Cut(lastRun, "--- stdout\n")
	return model.Response{Text: "greet.sh greets the name it is given, or the world; README.md shows both uses. " +
		"The first version printed \"Hello, !\" without a name, so I made ${1:-world} the default. " +
		"The last test run printed:\n\n" + indent(out) + "\nThe script:\n\n" + indent(script)}, nil
}

func calls(text string, cs ...session.ToolCall) model.Response {
	return model.Response{Text: text, ToolCalls: cs}
}

func call(id, name string, args map[string]any) session.ToolCall {
	b, err := json.Marshal(args)
	if err != nil {
		panic(err) // strings and maps of strings always encode
	}
	return session.NewToolCall(id, name, string(b))
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ") + "\n"
}
