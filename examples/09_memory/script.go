package memory

import (
	"context"
	"fmt"
	"strings"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

// buildArgs are try_build's arguments.
type buildArgs struct {
	CGO bool `json:"cgo" jsonschema:"build with CGO_ENABLED=1 (true) or CGO_ENABLED=0 (false)"`
}

// tryBuild stands in for a build on the release image, which has Go but no
// C compiler: with cgo the build fails, without it a static binary is made.
func tryBuild() (tool.Tool, error) {
	return tool.FuncWith("try_build", "Build rath's release binary on the release image, with or without cgo, and report the outcome.",
		func(_ context.Context, _ tool.Env, a buildArgs) (string, error) {
			if a.CGO {
				return "CGO_ENABLED=1 go build -o bin/rath ./cmd/rath\nexit code 1\n# runtime/cgo\n" +
					`cgo: C compiler "gcc" not found: exec: "gcc": executable file not found in $PATH`, nil
			}
			return "CGO_ENABLED=0 go build -o bin/rath ./cmd/rath\nexit code 0\nbuilt bin/rath (static, linux/amd64, 21.4 MB)", nil
		},
		tool.Idempotent[buildArgs]())
}

// rule is what the scripted builder concludes, and so what is remembered
// offline.
const rule = "Release builds of rath must use CGO_ENABLED=0: the release image has no C compiler, so a cgo build fails there."

// builder checks the user's correction both ways, then states the rule.
func builder(_ context.Context, req *model.Request) (model.Response, error) {
	for _, m := range req.Messages {
		if m.Role == session.RoleTool {
			return model.Response{Text: rule, Usage: usage(req, rule)}, nil
		}
	}
	text := "Checking your correction on the release image, with and without cgo."
	return model.Response{Text: text, ToolCalls: []session.ToolCall{
		session.NewToolCall("build_cgo", "try_build", `{"cgo":true}`),
		session.NewToolCall("build_static", "try_build", `{"cgo":false}`),
	}, Usage: usage(req, text)}, nil
}

// helper writes the CI step, using a recalled rule if there is one.
func helper(_ context.Context, req *model.Request) (model.Response, error) {
	recalled := ""
	for _, m := range req.Messages {
		if m.Source == session.KindMemory && strings.Contains(m.Content, "CGO_ENABLED=0") {
			recalled = m.Content
		}
	}
	var text string
	if recalled != "" {
		uri := recalled[strings.Index(recalled, "[")+1 : strings.Index(recalled, "]")]
		text = "```yaml\n- name: Build the release binary\n  run: CGO_ENABLED=0 go build -trimpath -o bin/rath ./cmd/rath\n```\n" +
			fmt.Sprintf("CGO_ENABLED=0 because memory says the release image has no C compiler (%s).", uri)
	} else {
		text = "```yaml\n- name: Build the release binary\n  run: go build -trimpath -o bin/rath ./cmd/rath\n```\n" +
			"Nothing in memory says release builds differ, so this is the plain build."
	}
	return model.Response{Text: text, Usage: usage(req, text)}, nil
}

// usage is a plausible token count: about four bytes a token.
func usage(req *model.Request, text string) session.Usage {
	in := 0
	for _, m := range req.Messages {
		in += len(m.Content)
	}
	return session.Usage{InputTokens: int64(in+3) / 4, OutputTokens: int64(len(text)+3) / 4}
}
