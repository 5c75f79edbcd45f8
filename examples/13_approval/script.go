package approval

import (
	"context"
	"strings"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/session"
)

// The scripted releaser: the changelog entry, then the packaging command,
// then an answer that depends on what became of the command. The command
// dates the changelog before it archives it, so that every run makes the
// same archive (tar keeps the file's time).

const (
	changelog = "# Changelog\n\n## v1.4.0\n\n- Parallel branches get their own copy of the workspace.\n"
	pack      = "mkdir -p release && touch -t 202601010000 CHANGELOG.md && tar -czf release/rath-v1.4.0.tar.gz CHANGELOG.md && tar -tzf release/rath-v1.4.0.tar.gz"
)

func release(_ context.Context, req *model.Request) (model.Response, error) {
	var last *session.Message
	for i := range req.Messages {
		if req.Messages[i].Role == session.RoleTool {
			last = &req.Messages[i]
		}
	}
	switch {
	case last == nil:
		return respond(req, "First the changelog entry.",
			session.NewToolCall("write_changelog", "write_file", `{"path":"CHANGELOG.md","content":`+quote(changelog)+`}`)), nil
	case last.Name == "write_file":
		return respond(req, "Now I package the release; this command needs your approval.",
			session.NewToolCall("package", "run_command", `{"shell":`+quote(pack)+`}`)), nil
	case strings.Contains(last.Content, `"error":"rejected"`):
		return respond(req, "I did not package v1.4.0: the packaging command was rejected. CHANGELOG.md has the new entry; "+
			"ask me again once packaging is approved."), nil
	case strings.Contains(last.Content, "exit code 0"):
		return respond(req, "Released v1.4.0: CHANGELOG.md has the entry, and release/rath-v1.4.0.tar.gz contains it."), nil
	}
	return respond(req, "Packaging failed; its output is above."), nil
}

// quote is s as a JSON string.
func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// respond is a scripted answer with plausible usage: about four bytes a
// token.
func respond(req *model.Request, text string, calls ...session.ToolCall) model.Response {
	in := 0
	for _, m := range req.Messages {
		in += len(m.Content)
	}
	out := len(text)
	for _, c := range calls {
		out += len(c.Args)
	}
	return model.Response{Text: text, ToolCalls: calls, Usage: session.Usage{InputTokens: int64(in+3) / 4, OutputTokens: int64(out+3) / 4}}
}
