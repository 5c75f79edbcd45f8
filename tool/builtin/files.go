// Package builtin holds the built-in tools, which work on the session's
// sandbox. None is offered unless an agent lists it; Default is a common
// set.
package builtin

import (
	"context"
	"fmt"
	"strings"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

func sb(env tool.Env) (sandbox.Sandbox, error) {
	if env.Sandbox == nil {
		return nil, tool.ErrNoSandbox
	}
	return env.Sandbox, nil
}

// ReadFileArgs are read_file's arguments.
type ReadFileArgs struct {
	Path string `json:"path" jsonschema:"file path relative to the workspace"`
	// Lines are 1-based and inclusive; 0 means from the start / to the end.
	From int `json:"from,omitempty" jsonschema:"first line to return (1-based), default 1"`
	To   int `json:"to,omitempty" jsonschema:"last line to return (inclusive), default the end"`
}

// ReadFile returns a file, or a range of its lines.
func ReadFile() tool.Tool {
	return must(tool.FuncWith("read_file", "Read a text file from the workspace, optionally only lines from..to (1-based, inclusive).",
		func(ctx context.Context, env tool.Env, a ReadFileArgs) (string, error) {
			s, err := sb(env)
			if err != nil {
				return "", err
			}
			data, err := s.ReadFile(ctx, a.Path)
			if err != nil {
				return "", err
			}
			if a.From <= 1 && a.To <= 0 {
				return string(data), nil
			}
			lines := strings.SplitAfter(string(data), "\n")
			from, to := max(a.From, 1), a.To
			if to <= 0 || to > len(lines) {
				to = len(lines)
			}
			if from > to {
				return "", tool.Errorf(session.ToolErrInvalidArgs, nil, fmt.Sprintf("lines %d..%d: the file has %d lines", a.From, a.To, len(lines)))
			}
			return strings.Join(lines[from-1:to], ""), nil
		},
		tool.WithResources(func(a ReadFileArgs) []tool.Resource { return []tool.Resource{tool.PathRead(a.Path)} }),
		tool.Idempotent[ReadFileArgs](),
		tool.WithRisk[ReadFileArgs](tool.RiskLow)))
}

// WriteFileArgs are write_file's arguments.
type WriteFileArgs struct {
	Path    string `json:"path" jsonschema:"file path relative to the workspace"`
	Content string `json:"content" jsonschema:"the whole new content of the file"`
}

// WriteFile creates or replaces a file.
func WriteFile() tool.Tool {
	return must(tool.FuncWith("write_file", "Create or replace a file in the workspace with the given content.",
		func(ctx context.Context, env tool.Env, a WriteFileArgs) (string, error) {
			s, err := sb(env)
			if err != nil {
				return "", err
			}
			if err := s.WriteFile(ctx, a.Path, []byte(a.Content)); err != nil {
				return "", err
			}
			return fmt.Sprintf("wrote %d bytes to %s", len(a.Content), a.Path), nil
		},
		tool.WithResources(func(a WriteFileArgs) []tool.Resource { return []tool.Resource{tool.PathWrite(a.Path)} }),
		tool.Idempotent[WriteFileArgs](),
		tool.WithRisk[WriteFileArgs](tool.RiskMedium)))
}

// EditFileArgs are edit_file's arguments.
type EditFileArgs struct {
	Path string `json:"path" jsonschema:"file path relative to the workspace"`
	Old  string `json:"old" jsonschema:"the exact text to replace; it must occur exactly once"`
	New  string `json:"new" jsonschema:"the replacement text"`
}

// EditFile replaces one exact occurrence of a text.
func EditFile() tool.Tool {
	return must(tool.FuncWith("edit_file", "Replace an exact piece of text in a file. The old text must occur exactly once.",
		func(ctx context.Context, env tool.Env, a EditFileArgs) (string, error) {
			s, err := sb(env)
			if err != nil {
				return "", err
			}
			data, err := s.ReadFile(ctx, a.Path)
			if err != nil {
				return "", err
			}
			if a.Old == "" {
				return "", tool.Errorf(session.ToolErrInvalidArgs, nil, "old text is empty")
			}
			switch n := strings.Count(string(data), a.Old); n {
			case 1:
			case 0:
				return "", tool.Errorf(session.ToolErrExecution, nil, fmt.Sprintf("the old text does not occur in %s", a.Path))
			default:
				return "", tool.Errorf(session.ToolErrExecution, nil, fmt.Sprintf("the old text occurs %d times in %s; give more context so it occurs once", n, a.Path))
			}
			out := strings.Replace(string(data), a.Old, a.New, 1)
			if err := s.WriteFile(ctx, a.Path, []byte(out)); err != nil {
				return "", err
			}
			return fmt.Sprintf("edited %s", a.Path), nil
		},
		tool.WithResources(func(a EditFileArgs) []tool.Resource { return []tool.Resource{tool.PathWrite(a.Path)} }),
		tool.WithRisk[EditFileArgs](tool.RiskMedium)))
}

func must(t tool.Tool, err error) tool.Tool {
	if err != nil {
		panic(err) // the argument types are this package's own
	}
	return tool.InSandbox(t)
}
